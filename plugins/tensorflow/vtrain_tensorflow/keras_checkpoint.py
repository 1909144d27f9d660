"""One Keras checkpoint inside a committed CheckpointManager step: the model file and its record.

```
step-000000000048/data-…/
  model.keras          the full model (weights and optimizer state), or
  model.weights.h5     the weights alone (save_weights_only)
  vtrain-keras.json    where in training it was taken, and the monitored value
  data-position.json   every worker's data position, merged (model_checkpoint(data=...))
```

The record sits beside the model so that the manifest's CRC covers it too, and
so that `best()` and a restarted `save_best_only` can read every step's value
without downloading a single model.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from vtrain.checkpoints import CheckpointManager
from vtrain.checkpoints.checksums import checksum
from vtrain.checkpoints.layout import step_folder
from vtrain.checkpoints.restore import committed_manifest
from vtrain.data.saved_position import write_position
from vtrain.errors import CheckpointError
from vtrain_tensorflow.internals import optimizer_built

RECORD = "vtrain-keras.json"
MODEL = "model.keras"
WEIGHTS = "model.weights.h5"
FORMAT = "vtrain.keras/1"


@dataclass(frozen=True)
class KerasCheckpoint:
    """A Keras checkpoint: when in training it was taken, how good it was, and where it is."""

    step: int
    """Batches trained when it was taken (the CheckpointManager step; 0 for a plain file)."""
    epoch: int
    """The epoch it was taken in, counted from 0 as Keras' callbacks count."""
    batch: int | None
    """Batches done into `epoch` (1 or more) when it was cut short; None at the epoch's end."""
    monitor: str | None = None
    value: float | None = None
    """`logs[monitor]` at the save, when the logs had it."""
    mode: str | None = None
    """"min" or "max": which way `value` is better."""
    weights_only: bool = False
    uri: str = ""
    """The committed step folder, or the plain ModelCheckpoint file."""
    data: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """The data position loaded with the step (its own file, not the record); None if none."""

    @property
    def initial_epoch(self) -> int:
        """`fit`'s initial_epoch to resume with: the next epoch, or this one again if cut short."""
        return self.epoch + 1 if self.batch is None else self.epoch

    @property
    def progress(self) -> tuple[int, int]:
        """(epochs complete, batches into the next one): larger is further into training."""
        return (self.epoch + 1, 0) if self.batch is None else (self.epoch, self.batch)

    def to_json(self) -> bytes:
        """The record file's content (the uri is where it is read from, not stored)."""
        fields = {k: v for k, v in asdict(self).items() if k not in ("uri", "data")}
        return json.dumps({"format": FORMAT, **fields}, sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes, uri: str) -> KerasCheckpoint:
        """Parse a record file; `CheckpointError` for anything but a record this module wrote."""
        try:
            raw = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise CheckpointError(f"not JSON ({e})", source=uri, path=RECORD) from e
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise CheckpointError(
                "not a vtrain Keras record", source=uri, path=RECORD, expected=repr(FORMAT)
            )
        try:
            record = cls(**{k: v for k, v in raw.items() if k != "format"}, uri=uri)
        except TypeError as e:
            raise CheckpointError(f"bad record ({e})", source=uri, path=RECORD) from e
        ints = (record.step, record.epoch, 0 if record.batch is None else record.batch)
        if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ints):
            raise CheckpointError(
                "bad step, epoch or batch",
                source=uri,
                path=RECORD,
                value=ints,
                expected="ints >= 0",
            )
        return record

    @property
    def model_file(self) -> str:
        """The model file's name inside the step's data folder."""
        return WEIGHTS if self.weights_only else MODEL


def finite(value: Any) -> float | None:
    """`value` as a float, or None when it is missing or not a finite number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def writer(model: Any, record: KerasCheckpoint, position: str | None = None) -> Any:
    """The callable `CheckpointManager.save` runs: the model file, the record and the data
    `position` (merged JSON, if any), in `folder`."""

    def write(folder: str) -> None:
        path = os.path.join(folder, record.model_file)
        if record.weights_only:
            model.save_weights(path)
        else:
            model.save(path)
        with open(os.path.join(folder, RECORD), "wb") as f:
            f.write(record.to_json())
        if position is not None:
            write_position(folder, position)

    return write


def read_record(manager: CheckpointManager, step: int) -> KerasCheckpoint | None:
    """The record of a committed step, checked against its manifest; None if there is none."""
    location = manager.location
    manifest = committed_manifest(location, step)
    if manifest is None or RECORD not in {f.name for f in manifest.files}:
        return None  # not committed, or not a Keras checkpoint
    entry = manifest.entry(RECORD)
    folder = location.join(step_folder(step))
    data = folder.join(manifest.folder).read_bytes(RECORD)
    if len(data) != entry.size or checksum(manifest.checksum, data) != entry.checksum:
        return None  # changed since it was committed: never trust it
    record = KerasCheckpoint.from_json(data, folder.uri)
    return replace(record, step=step)


def records(manager: CheckpointManager) -> list[KerasCheckpoint]:
    """The records of every committed Keras step in the shared folder, oldest first."""
    found = (read_record(manager, step) for step in manager.steps())
    return [r for r in found if r is not None]


def build_optimizer(model: Any) -> None:
    """Create the optimizer's variables, so that loading fills them instead of skipping them.

    A compiled model that has not trained yet has none, and both Keras versions
    then load the weights and drop the saved optimizer state with a warning.
    """
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not hasattr(optimizer, "build"):
        return
    if not optimizer_built(optimizer):
        optimizer.build(model.trainable_variables)


def load_into(model: Any, path: str, strategy: Any) -> None:
    """Load a .keras or .weights.h5 file into `model`: weights, and optimizer state if saved."""
    with strategy.scope():  # new optimizer variables must be the strategy's, as the model's are
        build_optimizer(model)
        model.load_weights(path)


def load_weights_through_twin(keras: Any, model: Any, path: str, strategy: Any) -> None:
    """Load only the layers' weights into a model that has trained under a distribution strategy.

    tf-keras cannot load its own files into such a model: the metrics' variables,
    built by `fit`, are sync-on-read, and assigning them from the file fails
    ("unsupported operand type(s) for /: 'Dataset' and 'int'"). An uncompiled
    twin has no metrics and no optimizer; it loads the file, and hands the
    weights over. A model Keras cannot clone (a subclassed one) loads directly.
    """
    try:
        with strategy.scope():
            twin = keras.models.clone_model(model)
    except (ValueError, TypeError, NotImplementedError):
        load_into(model, path, strategy)
        return
    twin.load_weights(path)
    model.set_weights(twin.get_weights())
