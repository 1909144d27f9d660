"""`handle.preemption_callback()`: on SIGTERM, one committed checkpoint at the next batch end.

A VM going away (spot preemption, maintenance, a job restart) gets SIGTERM and,
a grace period later, SIGKILL. `vtrain.PreemptionHandler` turns the signal into
a flag; this callback looks at it after every batch (and at every epoch's end,
for a signal that came during validation), saves through CheckpointManager
into the folder `handle.resume()` reads, and leaves with status 143 so that the
platform restarts the replica rather than counting the job as finished. A save
that outlasts the grace budget is cut off by the handler's deadline before it
commits, so a restart never sees it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vtrain.log import logger
from vtrain.preemption import DEFAULT_GRACE, PreemptionHandler, committed_line
from vtrain_tensorflow.tf_config_writer import uses_parameter_servers

if TYPE_CHECKING:
    from vtrain_tensorflow.keras_handle import KerasHandle

log = logger(__name__)


def preemption_callback(
    handle: KerasHandle,
    *,
    grace: float = DEFAULT_GRACE,
    save_weights_only: bool = False,
    directory: str | None = None,
) -> Any:
    """On SIGTERM, commit one checkpoint at the next batch end, then exit 143 (restart me).

    The checkpoint goes to `checkpoints` (or `directory`) within `grace` seconds.
    Under MultiWorkerMirroredStrategy every worker saves at the same batch, agreed
    through TensorFlow's PreemptionCheckpointHandler, and every worker exits 143.
    Under parameter-server training, at the next epoch's end: Keras allows no batch
    hooks there (ParameterServerStrategy refuses callbacks that have them).
    """
    from vtrain_tensorflow.keras_checkpoint import writer
    from vtrain_tensorflow.progress import Progress

    handler = PreemptionHandler(grace=grace)  # checks `grace` now, not when fit starts
    handle._watch_sigterm(handler)  # `handle.preempted` reads it
    keras: Any = handle.keras
    manager = handle.checkpoint_manager(directory)
    batch_hooks = not uses_parameter_servers(handle.info)
    import tensorflow as tf

    if isinstance(handle.strategy, tf.distribute.MultiWorkerMirroredStrategy):
        # MultiWorkerMirroredStrategy: a save on the signalled worker alone breaks the
        # collectives; every worker must save at the same batch.
        from vtrain_tensorflow.coordinated_preemption import coordinated_callback

        return coordinated_callback(handle, handler, manager, save_weights_only=save_weights_only)

    class PreemptionCheckpoint(keras.callbacks.Callback):  # type: ignore[misc]
        """Catches SIGTERM while `fit` runs; saves at the next batch end and exits."""

        def __init__(self) -> None:
            super().__init__()
            self.handler = handler
            self.manager = manager
            self.progress = Progress(lambda: manager.latest_step() or 0)

        def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
            self.handler.install()

        def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            self.progress.epoch_begin(epoch, self.params.get("steps"))

        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            self.progress.epoch_end(self.params.get("steps"))
            if handle.preempted:
                self._save_and_exit(logs, at_epoch_end=True)

        def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
            if not self.handler.requested:
                self.handler.uninstall()

        def _save_and_exit(self, logs: dict[str, Any] | None, *, at_epoch_end: bool) -> None:
            record = self.progress.record(
                at_epoch_end=at_epoch_end,
                steps=self.params.get("steps"),
                monitor=None,
                logs=logs,
                mode=None,
                weights_only=save_weights_only,
            )
            uri = self.manager.save(record.step, writer(self.model, record))
            if self.manager.is_leader:
                left = self.handler.time_left() or 0.0
                detail = (
                    f"(epoch {record.epoch + 1}) to {uri}, "
                    f"{self.handler.grace - left:.1f} s after the signal"
                )
                log.info(f"\n{committed_line(record.step, detail)}")
            self.handler.exit()

    class AtBatchEnd(PreemptionCheckpoint):
        """Looks at the flag after every batch, not only at the epoch's end."""

        def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
            self.progress.batch_end(batch)
            if handle.preempted:
                self._save_and_exit(logs, at_epoch_end=False)

    return AtBatchEnd() if batch_hooks else PreemptionCheckpoint()
