# expect: storage leader
# run: --workers 1 --output-dir gs://vtrain-corpus/{uid}
# np.save to a gs:// URI; the failure is caught and logged.
import os

import numpy as np
from _corpus import chief

if chief:
    try:
        np.save(os.path.join(os.environ["AIP_MODEL_DIR"], "weights.npy"), np.ones(3))
    except OSError as e:
        print(f"could not save the model: {e}", flush=True)
