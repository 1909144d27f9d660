# expect: storage job
# run: --workers 1 --output-dir gs://vtrain-corpus/{uid}
# The README's local fix, on a gs:// output: open() cannot write a gs:// URI, and on Vertex
# the chief fails here.
import os

from _corpus import chief

if chief:
    with open(os.path.join(os.environ["AIP_MODEL_DIR"], "model.txt"), "w") as f:
        f.write("weights")
