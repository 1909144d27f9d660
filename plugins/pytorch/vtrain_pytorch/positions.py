"""The data position saved in a step: every replica's stream position, gathered and merged.

At a save every trainer hands its `Stream.state()` to the leader (one gloo or
NCCL `all_gather_object`), which writes the merged position as JSON into the
step folder beside the model, so both are committed together or not at all.
A resume reads it back; `handle.stream(resume=found)` deals out what was left.
"""

from __future__ import annotations

import json
from typing import Any, Protocol


class Positioned(Protocol):
    """What `data=` takes: a `vtrain.data.Stream`, or the `StreamDataset` around one."""

    def state(self) -> dict[str, Any] | None: ...


def gather(data: Positioned) -> str:
    """Every trainer's position of `data`, merged, as JSON; a collective: all must call it."""
    import torch.distributed as dist

    from vtrain.data import merge_states
    from vtrain.data.saved_position import own_position

    mine = own_position(data)
    if dist.is_available() and dist.is_initialized():
        states: list[Any] = [None] * dist.get_world_size()
        # Gathered on every rank: the trainers check them alike and none waits for the leader.
        dist.all_gather_object(states, mine)
    else:
        states = [mine]
    # Serialised now: the stream goes on reading while a background save writes it.
    return json.dumps(merge_states(states), separators=(",", ":"))
