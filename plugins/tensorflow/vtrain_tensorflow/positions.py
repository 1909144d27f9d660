"""Every worker's data position at a Keras save, merged into the step the leader commits.

TensorFlow's collectives move numbers, not JSON; so, as MXNet's plugin does,
each worker writes its part beside the steps (`vtrain.data.saved_position.PARTS`), all meet at
`handle.barrier()` (one all-reduce), and the leader reads them, merges them
and writes the result into the step with the model. Under
MultiWorkerMirroredStrategy every worker saves the model (its collective
ops need them all), so every worker reaches this at the same step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vtrain.checkpoints import CheckpointManager


def gather(
    manager: CheckpointManager,
    step: int,
    mine: dict[str, Any] | None,
    place: tuple[int, int],
    barrier: Callable[[], None],
) -> str | None:
    """Every worker's position, merged, as JSON on the leader (None elsewhere); a collective."""
    from vtrain.data.saved_position import gather_through_folder

    return gather_through_folder(
        manager.location, step, mine, place, is_leader=manager.is_leader, barrier=barrier
    )
