"""A Gluon network's parameters and its Trainer's states through vtrain's CheckpointManager.

The leader saves, once per epoch; every worker restores the newest committed
epoch on start, so all resume from the same state. A save is committed or
absent, never half there: a replica killed mid-save restarts from the epoch
before. Under dist_async the optimizer runs on the servers, which MXNet
cannot save: the parameters alone are kept then.

With `data` (the stream trained on) every worker's position goes into the same
commit. MXNet's kvstore gathers no objects, so each worker writes its own part
beside the steps (`vtrain.data.saved_position.PARTS`), all meet at the kvstore's
barrier, and the leader merges the parts into the step it commits, then removes
them. The parameters and trainer states are whole on every worker under dist_sync, so a commit can
be resumed by any number of workers: the servers of the new job start from the
workers' parameters, and what was left of the epoch is dealt anew.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from vtrain.checkpoints import CheckpointManager
from vtrain.data.saved_position import read_position, write_position
from vtrain.plugins.handle import Resumed
from vtrain_mxnet.internals import states_are_local

PARAMS_FILE = "net.params"
STATES_FILE = "trainer.states"
INFO_FILE = "epoch.json"


def gather(
    manager: CheckpointManager,
    epoch: int,
    data: Any,
    rank: int,
    world_size: int,
    barrier: Callable[[], None],
) -> str | None:
    """Every worker's position of `data`, merged, as JSON on the leader (None elsewhere).

    A collective: every worker must call it at the same epoch. MXNet's kvstore gathers no
    objects: the parts meet in the checkpoint folder (`vtrain.data.saved_position`).
    """
    from vtrain.data.saved_position import gather_through_folder, own_position

    return gather_through_folder(
        manager.location,
        epoch,
        own_position(data),
        (rank, world_size),
        is_leader=manager.is_leader,
        barrier=barrier,
    )


class GluonState:
    """Saves and restores a network, its trainer and the number of epochs done."""

    def __init__(self, manager: CheckpointManager) -> None:
        self.manager = manager

    def save(
        self,
        epoch: int,
        net: Any,
        trainer: Any = None,
        *,
        blocking: bool = False,
        position: str | None = None,
    ) -> str | None:
        """Commit `epoch` (epochs done) from the leader; other replicas do nothing and get None.

        The arrays are copied out to local files in the call (MXNet's save waits
        for every pending write to them); the rest
        is committed in the background unless `blocking`.
        """
        if not self.manager.is_leader:
            return None

        def write(folder: str) -> None:
            net.save_parameters(os.path.join(folder, PARAMS_FILE))
            if trainer is not None and states_are_local(trainer):
                trainer.save_states(os.path.join(folder, STATES_FILE))
            with open(os.path.join(folder, INFO_FILE), "w") as f:
                json.dump({"epoch": epoch}, f)
            if position is not None:
                write_position(folder, position)

        return self.manager.save(epoch, write, blocking=blocking)

    def restore(self, net: Any, trainer: Any = None) -> Resumed:
        """Load the newest committed epoch into `net` and `trainer`; say which (falsy: none yet)."""
        checkpoint = self.manager.restore()
        if checkpoint is None:
            return Resumed()
        # From /gcs or gs:// the step is a temporary local copy: removed once loaded.
        with checkpoint:
            assert checkpoint.directory is not None  # callable saves restore as a folder
            folder = checkpoint.directory
            # The parameters first: the trainer's first use broadcasts them from rank 0.
            net.load_parameters(os.path.join(folder, PARAMS_FILE))
            states = os.path.join(folder, STATES_FILE)
            if trainer is not None and os.path.exists(states) and states_are_local(trainer):
                trainer.load_states(states)
            with open(os.path.join(folder, INFO_FILE)) as f:
                epoch = int(json.load(f)["epoch"])
            data = read_position(folder, checkpoint.uri)
        return Resumed(done=epoch, uri=checkpoint.uri, data=data)
