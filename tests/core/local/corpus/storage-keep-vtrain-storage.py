# expect: ready
# run: --workers 1 --output-dir gs://vtrain-corpus/{uid}
# Writes the model and a checkpoint through vtrain's storage, whatever the URI.
import os

from _corpus import chief

from vtrain import CheckpointManager
from vtrain.storage import open_location

CheckpointManager().save(1, b"state")
if chief:
    open_location(os.environ["AIP_MODEL_DIR"]).write_bytes("model.txt", b"weights")
