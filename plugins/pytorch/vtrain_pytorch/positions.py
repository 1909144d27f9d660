"""The data position saved in a step: every replica's stream position, gathered and merged.

At a save every trainer hands its `Stream.state()` to the leader (one gloo or
NCCL `all_gather_object`), which writes the merged position as JSON into the
step folder beside the model, so both are committed together or not at all.
A resume reads it back; `handle.stream(resume=found)` deals out what was left.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Protocol

from vtrain.errors import CheckpointError, UsageError

POSITION_FILE = "data-position.json"


class Positioned(Protocol):
    """What `data=` takes: a `vtrain.data.Stream`, or the `StreamDataset` around one."""

    def state(self) -> dict[str, Any] | None: ...


def gather(data: Positioned) -> str:
    """Every trainer's position of `data`, merged, as JSON; a collective: all must call it."""
    import torch.distributed as dist

    from vtrain.data import merge_states

    state = getattr(data, "state", None)
    if not callable(state):
        raise UsageError(
            "has no position",
            source="data",
            value=data,
            expected="the vtrain.data.Stream being trained on (handle.stream(...)), or None",
        )
    mine = state()
    if dist.is_available() and dist.is_initialized():
        states: list[Any] = [None] * dist.get_world_size()
        # Gathered on every rank: the trainers check them alike and none waits for the leader.
        dist.all_gather_object(states, mine)
    else:
        states = [mine]
    # Serialised now: the stream goes on reading while a background save writes it.
    return json.dumps(merge_states(states), separators=(",", ":"))


def write(folder: str, position: str) -> None:
    """Write a gathered position into a step folder being saved."""
    with open(os.path.join(folder, POSITION_FILE), "w", encoding="utf-8") as f:
        f.write(position)


def read(folder: str, uri: str) -> Mapping[str, Any] | None:
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
            expected="the data position TrainingState.save(data=...) wrote",
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


def describe(done: int, position: Mapping[str, Any] | None, world_size: int) -> str:
    """The log line of a resume's data: where in the epoch, and with how many trainers."""
    if position is None:
        return (
            f"vtrain: the commit of step {done} holds no data position; the data restarts its epoch"
        )
    from vtrain.data import progress

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
