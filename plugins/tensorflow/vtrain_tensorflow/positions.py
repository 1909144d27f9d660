"""Every worker's data position at a Keras save, merged into the step the leader commits.

TensorFlow's collectives move numbers, not JSON; so, as MXNet's plugin does,
each worker writes its part beside the steps (`PARTS`), all meet at
`handle.barrier()` (one all-reduce), and the leader reads them, merges them
and writes the result into the step with the model. Under
MultiWorkerMirroredStrategy every worker saves the model (its collective
ops need them all), so every worker reaches this at the same step.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from vtrain.checkpoints import CheckpointManager

PARTS = "data-positions"
"""Beside the steps: ``step-<N>/rank-<r>.json``, each worker's part until the leader commits."""


def gather(
    manager: CheckpointManager,
    step: int,
    mine: dict[str, Any] | None,
    place: tuple[int, int],
    barrier: Callable[[], None],
) -> str | None:
    """Every worker's position, merged, as JSON on the leader (None elsewhere); a collective."""
    from vtrain.data import merge_states

    rank, world_size = place
    if world_size <= 1:
        if manager.is_leader:
            _sweep(manager, None)  # what a killed job of more workers left
        return json.dumps(merge_states([mine]), separators=(",", ":"))
    folder = manager.location.join(PARTS, f"step-{step}")
    folder.write_bytes(f"rank-{rank}.json", json.dumps(mine).encode())
    barrier()  # every part is written
    if not manager.is_leader:
        return None
    parts = [json.loads(folder.read_bytes(f"rank-{r}.json")) for r in range(world_size)]
    _sweep(manager, step)  # read: the commit holds them now, merged
    return json.dumps(merge_states(parts), separators=(",", ":"))


def _sweep(manager: CheckpointManager, upto: int | None) -> None:
    """Remove the parts of saves up to `upto` (all when None): this save's, and any a killed
    job left. Later ones may be being written already, by workers past the barrier."""
    parts = manager.location.join(PARTS)
    for name in parts.list():
        number = name.rstrip("/").removeprefix("step-")
        if number.isdigit() and (upto is None or int(number) <= upto):
            parts.remove(name.rstrip("/"))
