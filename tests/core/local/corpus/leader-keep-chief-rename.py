# expect: ready
# The chief alone saves atomically (a temporary file renamed into place).
import os

from _corpus import chief, native_write

if chief:
    tmp = os.path.join(os.environ["AIP_MODEL_DIR"], ".model.tmp")
    native_write(tmp, b"weights")
    os.replace(tmp, os.path.join(os.environ["AIP_MODEL_DIR"], "model.bin"))
