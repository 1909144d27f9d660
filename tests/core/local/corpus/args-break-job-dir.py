# expect: args
# run: --workers 1 --platform aiplatform
# AI Platform passes --job-dir to every replica; the parser does not declare it.
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.parse_args()
