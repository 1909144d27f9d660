# expect: leader
# Every replica saves atomically: a temporary file in TMPDIR, renamed into AIP_MODEL_DIR.
import os

from _corpus import native_write

tmp = os.path.join(os.environ["TMPDIR"], "model.tmp")
native_write(tmp, b"weights")
os.replace(tmp, os.path.join(os.environ["AIP_MODEL_DIR"], "model.bin"))
