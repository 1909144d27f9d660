# expect: ready
# args: --epochs=2 --batch-size 8
# Declares every flag the job passes, in either form.
import argparse

from _corpus import save_model

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int)
parser.add_argument("--batch-size", type=int)
parser.parse_args()
save_model()
