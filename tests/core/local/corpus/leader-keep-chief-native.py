# expect: ready
# The chief alone saves the model from C.
import os

from _corpus import chief, native_write

if chief:
    native_write(os.path.join(os.environ["AIP_MODEL_DIR"], "model.pt"), b"weights")
