"""Which vtrain helper wrote a checkpoint, recorded beside it and checked before loading.

A folder of checkpoints can be shared by mistake (two scripts with the same
output folder); loading a Lightning Trainer state as a `TrainingState`, or the
other way round, fails deep inside torch or, worse, half succeeds. Each helper
writes its name into every step it saves and refuses a step another one wrote.
"""

from __future__ import annotations

import os

from vtrain.checkpoints import Checkpoint
from vtrain.errors import CheckpointError

# The file's name predates this module's: steps already saved carry it, so it stays.
PROVENANCE_FILE = "vtrain-writer.txt"
TRAINING_STATE = "vtrain_pytorch.TrainingState"
LIGHTNING = "vtrain_pytorch.lightning.VtrainCheckpoint"
# Steps saved before provenance was recorded: the file each helper writes names it.
_KNOWN_FILES = {"state.pt": TRAINING_STATE, "lightning.ckpt": LIGHTNING}


def record(folder: str, writer: str) -> None:
    """Write `writer` into a step folder being saved."""
    with open(os.path.join(folder, PROVENANCE_FILE), "w", encoding="utf-8") as f:
        f.write(writer + "\n")


def check(checkpoint: Checkpoint, writer: str) -> None:
    """Raise unless `checkpoint` was saved by `writer`."""
    folder = checkpoint.directory
    found: str | None = None
    if folder is not None:
        path = os.path.join(folder, PROVENANCE_FILE)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                found = f.read().strip()
        else:
            found = next(
                (
                    w
                    for name, w in _KNOWN_FILES.items()
                    if os.path.exists(os.path.join(folder, name))
                ),
                None,
            )
    if found != writer:
        raise CheckpointError(
            "this checkpoint was written by another helper; refusing to load it",
            source=checkpoint.uri,
            value=found or f"a {checkpoint.manifest.kind} save by no vtrain_pytorch helper",
            expected=f"a step saved by {writer}",
            hint="each script needs its own checkpoint folder: give the manager a directory "
            "of its own, or delete the folder to start over",
        )
