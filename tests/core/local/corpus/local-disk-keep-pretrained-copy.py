# expect: ready
# Every replica copies read-only pretrained weights into its scratch TMPDIR, as a cache.
import os
import shutil

from _corpus import save_model

copy = shutil.copy("inputs/pretrained.pt", os.path.join(os.environ["TMPDIR"], "pretrained.pt"))
with open(copy) as f:
    f.read()
save_model()
