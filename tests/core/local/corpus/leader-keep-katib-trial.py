# expect: ready
# run: --job {inputs}/katib.json --trial 3
# needs: kubeflow_katib_api
# A Katib trial: its model goes to that trial's own folder, which the rehearsal must check.
import os

from _corpus import chief

from vtrain.hypertune import report
from vtrain.storage import open_location

if chief:
    open_location(os.environ["AIP_MODEL_DIR"]).write_bytes("model.txt", b"weights")
    report(0.5)
