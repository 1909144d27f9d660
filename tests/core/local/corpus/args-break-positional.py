# expect: args
# args: --batch-size=8
# A parser that takes one positional argument refuses the job's flags.
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("config", nargs="?")
parser.parse_args()
