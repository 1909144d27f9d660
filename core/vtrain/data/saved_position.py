"""A data position saved in a checkpoint step: its file, reading it back, and the resume's line.

The plugins that commit every trainer's `Stream.state()`, merged, with their model
(PyTorch's TrainingState, MXNet's GluonState) write it here as JSON beside the
model, so both are committed together or not at all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from vtrain.errors import CheckpointError, UsageError
from vtrain.storage.location import Location

POSITION_FILE = "data-position.json"
"""In a step folder: every trainer's position at the save, merged (`merge_states`)."""
PARTS = "data-positions"
"""Beside the steps, for frameworks whose collectives move no objects (MXNet, TensorFlow):
``step-<N>/rank-<r>.json``, each worker's part until the leader commits them merged."""


def own_position(data: object) -> dict[str, Any] | None:
    """This trainer's position in `data` (what `save_checkpoint(data=...)` takes: a Stream)."""
    state = getattr(data, "state", None)
    if not callable(state):
        raise UsageError(
            "has no position",
            source="data",
            value=data,
            expected="the vtrain.data.Stream being trained on (handle.stream(...)), or None",
        )
    position: dict[str, Any] | None = state()
    return position


def write_position(folder: str, position: str) -> None:
    """Write a merged position (JSON text) into a step folder being saved."""
    with open(os.path.join(folder, POSITION_FILE), "w", encoding="utf-8") as f:
        f.write(position)


def read_position(folder: str, uri: str) -> Mapping[str, Any] | None:
    """The position saved in step `folder` (committed as `uri`); None when it holds none."""
    path = os.path.join(folder, POSITION_FILE)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            position = json.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(
            f"{POSITION_FILE} is not JSON ({e})",
            source=uri,
            expected="the data position save_checkpoint(data=...) wrote",
            hint="the step was changed after its commit; resume from another step",
        ) from e
    if not isinstance(position, dict):
        raise CheckpointError(
            f"{POSITION_FILE} holds no position",
            source=uri,
            value=type(position).__name__,
            expected="a JSON object, as merge_states() returns",
        )
    return position


def describe_resume(done: int, position: Mapping[str, Any] | None, world_size: int) -> str:
    """The log line of a resume's data: where in the epoch, and with how many trainers."""
    if position is None:
        return (
            f"vtrain: the commit of step {done} holds no data position; the data restarts its epoch"
        )
    from vtrain.data.progress import progress

    where = progress(position)
    was = where.world_size
    if where.left is None:  # not every file read to its end yet: their counts are unknown
        rest = f"{where.read} records read in epoch {where.epoch}, the rest left"
    else:
        rest = f"{where.left} records left in epoch {where.epoch}"
    line = f"vtrain: resumed step {done} from {was} workers on {world_size}; {rest}"
    if was != world_size:
        line += (
            f"; each worker keeps its batch size, so a global batch is now {world_size} "
            f"per-worker batches, not {was}"
        )
    return line


def gather_through_folder(
    checkpoint_dir: Location,
    step: int,
    mine: dict[str, Any] | None,
    place: tuple[int, int],
    *,
    is_leader: bool,
    barrier: Callable[[], None],
) -> str | None:
    """Every worker's position, merged, as JSON on the leader (None elsewhere); a collective.

    `checkpoint_dir` is the checkpoints' `vtrain.storage` location: each worker writes its
    part beside the steps, all meet at `barrier`, and the leader reads and merges them.
    """
    from vtrain.data.merge import merge_states

    rank, world_size = place
    parts = checkpoint_dir.join(PARTS)
    if world_size <= 1:
        if is_leader:
            _sweep(parts, None)  # what a killed job of more workers left
        return json.dumps(merge_states([mine]), separators=(",", ":"))
    folder = parts.join(f"step-{step}")
    folder.write_bytes(f"rank-{rank}.json", json.dumps(mine).encode())
    barrier()  # every part is written
    if not is_leader:
        return None
    merged = merge_states(
        [json.loads(folder.read_bytes(f"rank-{r}.json")) for r in range(world_size)]
    )
    _sweep(parts, step)  # read: the commit holds them now, merged
    return json.dumps(merged, separators=(",", ":"))


def _sweep(parts: Location, upto: int | None) -> None:
    """Remove the parts of saves up to `upto` (all when None): this save's, and any a killed
    job left. Later ones may be being written already, by workers past the barrier."""
    for name in parts.list():
        number = name.rstrip("/").removeprefix("step-")
        if number.isdigit() and (upto is None or int(number) <= upto):
            parts.remove(name.rstrip("/"))
