# expect: ready
# run: --workers 0 --kill chief:0@1 --max-restarts 1
# One rolling checkpoint file, rewritten at every step (as many loops keep `latest.pt`), and
# a config written at every start: the restart resumes from the file.
import json
import os
import time

from _corpus import CKPT_DIR, native_write, save_model

with open(os.path.join(CKPT_DIR, "config.json"), "w") as f:
    json.dump({"lr": 0.1}, f)
latest = os.path.join(CKPT_DIR, "latest.pt")
done = 0
if os.path.exists(latest):
    with open(latest) as f:
        done = int(f.read())
for step in range(done + 1, 41):
    time.sleep(0.05)
    native_write(latest, str(step).encode())
save_model()
