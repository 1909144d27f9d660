"""Model, optimizer and step through vtrain's CheckpointManager, so a restarted job resumes.

The leader saves; every replica restores the newest committed step on start, so
all ranks resume from the same state. A save is committed or absent, never half
there: a replica killed mid-save restarts from the step before.

By default a save copies the state to CPU memory and returns; `torch.save`,
the write and the commit run in the background (as
torch.distributed.checkpoint.async_save does), so training goes on meanwhile.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from vtrain import preemption
from vtrain.checkpoints import Checkpoint, CheckpointManager, Snapshot
from vtrain.data.saved_position import read_position, write_position
from vtrain.errors import UsageError
from vtrain.log import logger
from vtrain.plugins.handle import Resumed
from vtrain.preemption import committed_line
from vtrain_pytorch import positions
from vtrain_pytorch.positions import Positioned
from vtrain_pytorch.provenance import TRAINING_STATE, check, record

STATE_FILE = "state.pt"

log = logger(__name__)


class TrainingState:
    """Saves and restores a model, its optimizer and the step counter.

    `handle.save_checkpoint` and `handle.resume` use it on the handle's `checkpoints`.
    Without `manager` it makes one with `keep` (the newest N steps kept; None keeps
    them all), `is_leader` and any other CheckpointManager keyword.
    """

    def __init__(
        self,
        model: Any,
        optimizer: Any = None,
        *,
        manager: CheckpointManager | None = None,
        keep: int | None = None,
        is_leader: bool | None = None,
        **manager_options: Any,
    ) -> None:
        self.model = model
        self.optimizer = optimizer
        if manager is not None and (keep is not None or is_leader is not None or manager_options):
            given = sorted({*manager_options, *(["keep"] if keep is not None else [])})
            given += ["is_leader"] if is_leader is not None else []
            # They would be ignored silently: the manager was built with its own.
            raise UsageError(
                "manager options given with a manager",
                source="TrainingState",
                value=given,
                expected="either manager= or its options (keep=, is_leader=, ...), not both",
                hint="pass keep= and the rest to CheckpointManager(...) instead",
            )
        self.manager = manager or CheckpointManager(
            keep=keep, is_leader=is_leader, **manager_options
        )
        self.extra: dict[str, Any] = {}
        """The keywords the restored step was saved with; empty before a restore finds one."""

    def save(
        self,
        step: int,
        *,
        blocking: bool = False,
        data: Positioned | None = None,
        **extra: Any,
    ) -> str | None:
        """Commit this step from the leader; other replicas do nothing and get None.

        The step is committed in the background unless `blocking`; `wait()` waits
        for it (the next save, and the end of the script, do so by themselves; a save
        that fails at the end is logged and makes the script exit 1).
        With `data` (the stream being trained on) every trainer's position is
        gathered and committed with the model: then every trainer must call
        `save` at the same step, as for any collective.
        After SIGTERM (a preemption: SIGKILL follows 30 s later) the next save is the
        last: the leader commits it before returning, says `committed step N`, and
        every process exits 143, so that the platform restarts it and it resumes there.
        (`handle.save_checkpoint` does the same, with every trainer agreeing first.)
        """
        position = None if data is None else positions.gather(data)
        preemption.watch()
        preempted = preemption.requested()
        if not self.manager.is_leader:
            if preempted:
                # The leader commits this same step (every process saves at the same
                # steps): leave now, and the restart resumes from it.
                preemption.leave()
            return None
        now = blocking or preempted
        where = self.manager.save(
            step, self.payload(step, extra, position, blocking=now), blocking=now
        )
        if not preempted:
            return where
        # SIGTERM came since the last save: this one was the last, committed before the exit.
        log.info(committed_line(step, f"({where})"))
        preemption.leave()

    def payload(
        self, step: int, extra: dict[str, Any], position: str | None, *, blocking: bool
    ) -> Snapshot | Callable[[str], None]:
        """What the manager commits for `step`: `state.pt` (model, optimizer, step, `extra`),
        the data `position` (JSON, or None) and who wrote it. Not `blocking`: over a copy
        of the tensors in CPU memory, written later on the background thread."""
        import torch

        state = {"step": step, "model": _unwrapped(self.model).state_dict(), "extra": extra}
        if self.optimizer is not None:
            state["optimizer"] = self.optimizer.state_dict()
        if not blocking:
            # The loop changes the tensors in place at its next step: save a copy.
            self.manager.wait()  # the previous copy is written: one copy in memory at a time
            state = _cpu_copy(state)

        def write(folder: str) -> None:
            torch.save(state, os.path.join(folder, STATE_FILE))
            if position is not None:
                write_position(folder, position)
            record(folder, TRAINING_STATE)

        return write if blocking else Snapshot(write)

    def wait(self) -> None:
        """Wait until the last save is committed; a failed one raises `CheckpointError`."""
        self.manager.wait()

    def resume(self) -> Resumed:
        """Load the newest committed step into the model and optimizer; what was found.

        `done` is the step, `uri` its folder, `extra` the keywords it was saved
        with, `data` the data position saved with it (None without one); falsy,
        with the model untouched, when nothing is committed yet.
        """
        checkpoint = self.manager.restore()
        if checkpoint is None:
            return Resumed()
        # From /gcs or gs:// the step is a temporary local copy: removed once loaded.
        with checkpoint:
            return self.load(checkpoint)

    def load(self, checkpoint: Checkpoint) -> Resumed:
        """Load a restored step (open for the call) into the model and optimizer; what it held."""
        import torch

        assert checkpoint.directory is not None  # callable saves restore as a folder
        check(checkpoint, TRAINING_STATE)
        state = torch.load(
            os.path.join(checkpoint.directory, STATE_FILE),
            map_location="cpu",
            weights_only=True,
        )
        data = read_position(checkpoint.directory, checkpoint.uri)
        _unwrapped(self.model).load_state_dict(state["model"])
        if self.optimizer is not None and "optimizer" in state:
            self.optimizer.load_state_dict(state["optimizer"])
        self.extra = dict(state.get("extra", {}))
        return Resumed(
            done=int(state["step"]),
            uri=checkpoint.uri,
            extra=MappingProxyType(dict(self.extra)),
            data=data,
        )

    def restore(self) -> int | None:
        """Load the newest committed step into the model and optimizer; return it, or None."""
        found = self.resume()
        return found.done if found else None


def _cpu_copy(value: Any) -> Any:
    """`value` with every tensor copied to CPU memory, and its containers rebuilt."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    if isinstance(value, dict):
        return type(value)((k, _cpu_copy(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_cpu_copy(v) for v in value)
    return copy.deepcopy(value)


def _unwrapped(model: Any) -> Any:
    # A DDP-wrapped model's keys carry a "module." prefix; save and load the bare one.
    return getattr(model, "module", model)
