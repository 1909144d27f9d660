# expect: resume
# run: --workers 0 --kill chief:0@1 --max-restarts 1
# A shell step commits each checkpoint; the loop starts from 1 whatever was committed.
import subprocess
import time

from _corpus import save_model

for step in range(1, 41):
    time.sleep(0.05)
    folder = f'"$AIP_CHECKPOINT_DIR/step-{step:012d}"'
    subprocess.run(
        ["sh", "-c", f"mkdir -p {folder} && echo '{{}}' > {folder}/COMMIT.json"], check=True
    )
save_model()
