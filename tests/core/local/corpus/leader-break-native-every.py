# expect: leader
# Every replica saves the model from C, as torch.save does: no Python open to see.
import os

from _corpus import native_write

native_write(os.path.join(os.environ["AIP_MODEL_DIR"], "model.pt"), b"weights")
