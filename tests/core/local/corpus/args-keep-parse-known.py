# expect: ready
# args: --epochs 2 --lr 0.1
# parse_known_args: what the script does not declare, it leaves alone.
import argparse

from _corpus import save_model

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int)
parser.parse_known_args()
save_model()
