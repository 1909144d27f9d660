# expect: resume
# run: --workers 0 --kill chief:0@1 --max-restarts 1
# Writes vtrain's layout by hand (step folder, then its COMMIT.json) and never reads it back.
import os
import time

from _corpus import CKPT_DIR, save_model

for step in range(1, 41):
    time.sleep(0.05)
    folder = os.path.join(CKPT_DIR, f"step-{step:012d}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "COMMIT.json"), "w") as f:
        f.write("{}")
save_model()
