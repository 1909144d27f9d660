# expect: ready
# Each replica keeps scratch files on its own disk (TMPDIR, a cache in HOME) that nobody
# else needs, and no restart reads.
import os

import numpy as np
from _corpus import save_model

np.save(os.path.join(os.environ["TMPDIR"], "features.npy"), np.zeros(4))
os.makedirs(os.path.expanduser("~/.cache/corpus"), exist_ok=True)
with open(os.path.expanduser("~/.cache/corpus/index.txt"), "w") as f:
    f.write("0")
save_model()
