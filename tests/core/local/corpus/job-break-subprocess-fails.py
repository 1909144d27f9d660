# expect: job
# run: --workers 1 --max-restarts 0
# The chief's preprocessing step, a subprocess, fails, and so does the chief.
import subprocess

from _corpus import chief

if chief:
    subprocess.run(["sh", "-c", "echo 'preprocess: no input' >&2; exit 3"], check=True)
