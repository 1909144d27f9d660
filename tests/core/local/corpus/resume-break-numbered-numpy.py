# expect: resume
# run: --workers 0 --kill chief:0@1 --max-restarts 1
# Saves ckpt-N.npy into AIP_CHECKPOINT_DIR at every step and never loads one.
import os
import time

import numpy as np
from _corpus import CKPT_DIR, save_model

for step in range(1, 41):
    time.sleep(0.05)
    np.save(os.path.join(CKPT_DIR, f"ckpt-{step}.npy"), np.array([step]))
save_model()
