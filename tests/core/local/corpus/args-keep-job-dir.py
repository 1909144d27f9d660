# expect: ready
# run: --workers 1 --platform aiplatform
# Declares the --job-dir AI Platform passes, and saves the model below it from the chief.
import argparse
import os

from _corpus import chief

parser = argparse.ArgumentParser()
parser.add_argument("--job-dir", required=True)
job_dir = parser.parse_args().job_dir
if chief:
    os.makedirs(os.path.join(job_dir, "model"), exist_ok=True)
    with open(os.path.join(job_dir, "model", "model.txt"), "w") as f:
        f.write("weights")
