# expect: ready
# run: --workers 0 --kill chief:0@1 --max-restarts 1
# Saves ckpt-N.npy at every step, and resumes after the newest.
import os
import re
import time

import numpy as np
from _corpus import CKPT_DIR, save_model

done = [int(m[1]) for n in os.listdir(CKPT_DIR) if (m := re.fullmatch(r"ckpt-(\d+)\.npy", n))]
for step in range(max(done, default=0) + 1, 41):
    time.sleep(0.05)
    np.save(os.path.join(CKPT_DIR, f"ckpt-{step}.npy"), np.array([step]))
save_model()
