"""Lightning callbacks: restart-safe checkpoints through vtrain, the tuning metric, progress."""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from typing import Any

from lightning.pytorch import Callback, LightningModule, Trainer

import vtrain
from vtrain.checkpoints import Checkpoint, CheckpointManager
from vtrain.data.saved_position import read_position, write_position
from vtrain.log import logger
from vtrain.plugins.handle import COMMIT_SECONDS, Handle, Resumed
from vtrain.preemption import EXIT_STATUS, committed_line
from vtrain.progress import tracker
from vtrain.track import Track
from vtrain_pytorch.lightning.preemption import AgreedSigterm
from vtrain_pytorch.lightning.stream_loader import check_every, gather_position, mark_trained
from vtrain_pytorch.provenance import LIGHTNING, check, record

CHECKPOINT_FILE = "lightning.ckpt"

log = logger(__name__)


class VtrainCheckpoint(Callback):  # type: ignore[misc]
    """Saves the whole Trainer state each epoch as one committed vtrain checkpoint.

    With `every_n_train_steps`, every N steps too, so that a resume continues
    mid-epoch; with a `StreamLoader` the commit holds every rank's data position
    after the batch that trained (see `vtrain_pytorch.lightning.stream_loader`).

    Lightning's own ModelCheckpoint writes files in place: a replica killed
    mid-write leaves a `last.ckpt` that looks valid and is not. Here a step is
    committed whole or not at all, and only the leader writes it. Unless
    `blocking`, the leader serializes the state to local disk and trains on while
    the step is synced (or uploaded) and committed in the background.

    On SIGTERM (a preemption) of any rank, every rank stops after the same batch
    (see `vtrain_pytorch.lightning.preemption`); the state is committed there,
    the leader says `committed step N`, and every process exits 143, not
    Lightning's 0, which would end a Vertex job as a success.
    """

    def __init__(
        self,
        manager: CheckpointManager,
        *,
        every_n_epochs: int = 1,
        every_n_train_steps: int | None = None,
        blocking: bool = False,
        track: Track | None = None,
    ) -> None:
        self.manager = manager
        self.track = track
        """The job's run (`handle.track`), which a resume is marked in."""
        self.every_n_epochs = every_n_epochs
        self.every_n_train_steps = check_every(every_n_train_steps)
        self._saved_step = -1
        self.blocking = blocking
        self._restored: Checkpoint | None = None
        self._sigterm = AgreedSigterm()

    def on_train_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Commit the state after every `every_n_epochs` epochs."""
        if (trainer.current_epoch + 1) % self.every_n_epochs or trainer.sanity_checking:
            return
        self._save(trainer, blocking=self.blocking)

    def on_train_batch_end(
        self, trainer: Trainer, pl_module: LightningModule, outputs: Any, batch: Any, index: int
    ) -> None:
        """Mark the batch trained (for StreamLoader); commit every `every_n_train_steps`."""
        mark_trained(trainer)
        self._sigterm.agree(trainer)
        every = self.every_n_train_steps
        if every is not None and trainer.global_step % every == 0:
            self._save(trainer, blocking=self.blocking)

    def on_exception(
        self, trainer: Trainer, pl_module: LightningModule, exception: BaseException
    ) -> None:
        """After a SIGTERM, commit the state where every rank stopped; then exit 143."""
        from lightning.pytorch.utilities.exceptions import SIGTERMException

        if not isinstance(exception, SIGTERMException):
            return
        # Every rank stopped after the same batch (AgreedSigterm): the save's collectives meet.
        self._save(trainer, blocking=True)
        if self.manager.is_leader:
            log.info(committed_line(trainer.global_step))
        raise SystemExit(EXIT_STATUS)

    def _save(self, trainer: Trainer, *, blocking: bool) -> None:
        # Trainer.save_checkpoint is the public way to the full state; every rank must call
        # it (it gathers sharded state and ends in a barrier), and only global rank 0 writes.
        # weights_only=False, said: the full state is the point (optimizer, loops, callbacks),
        # and left unset Lightning logs "`weights_only` was not set" on every rank, each save.
        if trainer.global_step == self._saved_step:
            return  # committed already (by steps, then again at the epoch's end)
        self._saved_step = trainer.global_step
        position = gather_position(trainer)  # a collective: every rank's StreamLoader position
        tracker().reached(trainer.global_step, committed=self.manager.is_leader)
        # A commit the ranks wait for is no step: bounded by its own waits, not the step's.
        waiting = tracker().long("the checkpoint commit", COMMIT_SECONDS)
        with waiting if blocking else contextlib.nullcontext():
            if self.manager.is_leader:

                def write(folder: str) -> None:
                    path = os.path.join(folder, CHECKPOINT_FILE)
                    trainer.save_checkpoint(path, weights_only=False)
                    record(folder, LIGHTNING)
                    if position is not None:
                        write_position(folder, position)

                self.manager.save(trainer.global_step, write, blocking=blocking)
            else:
                with tempfile.TemporaryDirectory(prefix="vtrain-lightning-") as scratch:
                    path = os.path.join(scratch, CHECKPOINT_FILE)
                    trainer.save_checkpoint(path, weights_only=False)
            trainer.strategy.barrier("vtrain-checkpoint")

    def resume_path(self) -> str | None:
        """A local path to the newest committed Trainer state, for `fit(ckpt_path=...)`.

        From /gcs or gs:// it is a temporary copy, removed once training has started
        from it (Lightning has loaded it by then).
        """
        self._close_restored()
        checkpoint = self.manager.restore()
        if checkpoint is None or checkpoint.directory is None:
            return None
        try:
            check(checkpoint, LIGHTNING)
        except BaseException:
            checkpoint.close()
            raise
        self._restored = checkpoint
        if self.track is not None:
            self.track.resumed(checkpoint.step, checkpoint.uri)
        return os.path.join(checkpoint.directory, CHECKPOINT_FILE)

    def resumed(self) -> Resumed:
        """The step `resume_path()` found and its data position, for `handle.stream(resume=...)`.

        Call it after `resume_path()` and before `fit` (which drops the restored copy).
        """
        checkpoint = self._restored
        if checkpoint is None or checkpoint.directory is None:
            return Resumed()
        data = read_position(checkpoint.directory, checkpoint.uri)
        return Resumed(done=checkpoint.step, uri=checkpoint.uri, data=data)

    def on_train_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """The restored state is loaded by now: drop its temporary copy. Take SIGTERM over."""
        self._close_restored()
        # Lightning installed its own SIGTERM handler just before (Trainer._run).
        self._sigterm.install()

    def teardown(self, trainer: Trainer, pl_module: LightningModule, stage: str) -> None:
        """Commit the last background save; drop the temporary copy if training never started."""
        self._close_restored()
        self._sigterm.uninstall()
        self.manager.wait()

    def _close_restored(self) -> None:
        if self._restored is not None:
            self._restored.close()
            self._restored = None


class HypertuneCallback(Callback):  # type: ignore[misc]
    """Reports a logged metric to the tuning service at the end of every epoch.

    With `handle`, through `handle.report` (its leader, its environment), as
    `trainer_options` makes it; else from global rank 0, by the process's environment.
    """

    def __init__(
        self, monitor: str, *, tag: str | None = None, handle: Handle | None = None
    ) -> None:
        self.monitor = monitor
        self.tag = tag
        self.handle = handle

    def on_train_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Report `monitor` from the leader, when it was logged this epoch."""
        value: Any = trainer.callback_metrics.get(self.monitor)
        if value is None:
            return
        if self.handle is not None:
            self.handle.report(float(value), self.tag, step=trainer.global_step)
        elif trainer.is_global_zero:
            vtrain.hypertune.report(float(value), tag=self.tag, step=trainer.global_step)


class VtrainProgress(Callback):  # type: ignore[misc]
    """Marks each training step (`trainer.global_step`) in this process's progress tracker,
    and each validation, test or prediction batch as progress that is no step.

    The watchdog ends a trainer that makes no progress for longer than its bound, and
    `vtrain local run`'s live view shows the steps: a `fit` without this callback makes
    no progress either can see. A mark is a few attribute writes.
    """

    def on_train_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """From here the steps are this callback's: a batch of `handle.batches` is none."""
        # Before the first batch is fetched: Lightning takes one ahead of the step it trains,
        # which the tracker would count as a step until the first step's mark.
        progress = tracker()
        progress.explicit = True
        total = trainer.estimated_stepping_batches  # for a TrainJob's progress and ETA
        if isinstance(total, (int, float)) and math.isfinite(total):
            progress.total = int(total)

    def on_train_batch_end(
        self, trainer: Trainer, pl_module: LightningModule, outputs: Any, batch: Any, index: int
    ) -> None:
        """A step ended (with gradient accumulation, a batch of one: the step stays)."""
        tracker().stepped(trainer.global_step, explicit=True)

    def on_validation_batch_end(self, *args: Any, **kwargs: Any) -> None:
        """An evaluation batch: progress, no step."""
        tracker().alive()

    on_test_batch_end = on_validation_batch_end
    on_predict_batch_end = on_validation_batch_end
