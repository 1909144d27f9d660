# expect: args
# args: --epochs 2 --lr 0.1
# The study passes --lr; the parser declares only --epochs.
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int)
parser.parse_args()
