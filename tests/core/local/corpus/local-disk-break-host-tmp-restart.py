# expect: local-disk
# run: --workers 0 --kill chief:0@1 --max-restarts 1
# Checkpoints in a hard-coded /tmp folder: the restart resumes from them here, because the
# host's /tmp outlives the replica; on Vertex a restart is a new machine.
import os
import time

import numpy as np
from _corpus import host_tmp, save_model

path = host_tmp("ckpt.npy")
done = int(np.load(path)[0]) if os.path.exists(path) else 0
print(f"starting at step {done}", flush=True)
for step in range(done + 1, 41):
    time.sleep(0.05)
    np.save(path, np.array([step]))
save_model()
