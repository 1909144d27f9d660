# expect: leader
# Every replica saves the weights with numpy.
import os

import numpy as np

np.save(os.path.join(os.environ["AIP_MODEL_DIR"], "weights.npy"), np.ones(3))
