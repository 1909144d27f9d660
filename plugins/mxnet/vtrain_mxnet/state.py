"""A Gluon network's parameters and its Trainer's states through vtrain's CheckpointManager.

The leader saves (`handle.save_checkpoint`), once per epoch; every worker
restores the newest committed epoch on start, so all resume from the same
state. A save is committed or absent, never half there: a replica killed
mid-save restarts from the epoch before. Under dist_async the optimizer runs
on the servers, which MXNet cannot save: the parameters alone are kept then.
What the save was given beside them (`**extra`) is kept as JSON.

With `data` (the stream trained on) every worker's position goes into the same
commit. MXNet's kvstore gathers no objects, so each worker writes its own part
beside the steps (the core Handle's `_gather_position`), all meet at the kvstore's
barrier, and the leader merges the parts into the step it commits, then removes
them. The parameters and trainer states are whole on every worker under
dist_sync, so a commit can be resumed by any number of workers: the servers of
the new job start from the workers' parameters, and what was left of the epoch
is dealt anew.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from vtrain.data.saved_position import read_position, write_position
from vtrain.errors import UsageError
from vtrain.plugins.handle import Resumed
from vtrain_mxnet.internals import states_are_local

if TYPE_CHECKING:
    from vtrain.checkpoints import Checkpoint

PARAMS_FILE = "net.params"
STATES_FILE = "trainer.states"
INFO_FILE = "epoch.json"


def writer(
    step: int, net: Any, trainer: Any, extra: dict[str, Any], position: str | None
) -> Callable[[str], None]:
    """What the leader commits as `step`: the net's parameters, the trainer's states, `extra`.

    `extra` is JSON (checked here, in the caller's call, not in the background commit);
    it comes back as `Resumed.extra`.
    """
    try:
        info = json.dumps({"epoch": step, "extra": extra})
    except (TypeError, ValueError) as e:
        raise UsageError(
            f"not JSON: {e}",
            source="save_checkpoint(**extra)",
            value=sorted(extra),
            expected="values JSON can hold (numbers, strings, lists, dicts)",
        ) from None

    def write(folder: str) -> None:
        net.save_parameters(os.path.join(folder, PARAMS_FILE))
        if trainer is not None and states_are_local(trainer):
            trainer.save_states(os.path.join(folder, STATES_FILE))
        with open(os.path.join(folder, INFO_FILE), "w") as f:
            f.write(info)
        if position is not None:
            write_position(folder, position)

    return write


def read(checkpoint: Checkpoint, net: Any, trainer: Any = None) -> Resumed:
    """Load the committed step (open for the call) into `net` and `trainer`; what it held."""
    assert checkpoint.directory is not None  # callable saves restore as a folder
    folder = checkpoint.directory
    # The parameters first: the trainer's first use broadcasts them from rank 0.
    net.load_parameters(os.path.join(folder, PARAMS_FILE))
    states = os.path.join(folder, STATES_FILE)
    if trainer is not None and os.path.exists(states) and states_are_local(trainer):
        trainer.load_states(states)
    with open(os.path.join(folder, INFO_FILE)) as f:
        info = json.load(f)
    data = read_position(folder, checkpoint.uri)
    extra = MappingProxyType(dict(info.get("extra", {})))
    return Resumed(done=int(info["epoch"]), uri=checkpoint.uri, extra=extra, data=data)
