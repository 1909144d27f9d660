"""Preemption under MultiWorkerMirroredStrategy: every worker saves at the same batch, then exits.

SIGTERM reaches one worker. A save on that worker alone runs collective ops
its peers are not running (they are in the next batch's all-reduce), and the
chief dies with "Collective ops is aborted by: Shape mismatch". TensorFlow's
`PreemptionCheckpointHandler` solves exactly this: the signalled worker posts
the batch to save at in the coordination service, every worker acknowledges,
and each saves when it reaches that batch. vtrain supplies the save (through
CheckpointManager, into the folder `handle.resume()` reads, as
`model_checkpoint` does on every worker) and the exit (status 143). The
handler's own tf.train.Checkpoint folder stays empty: it is a private
temporary folder, needed by its constructor only.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import TYPE_CHECKING, Any

from vtrain.log import logger
from vtrain.preemption import PreemptionHandler, committed_line

if TYPE_CHECKING:
    from vtrain.checkpoints import CheckpointManager
    from vtrain_tensorflow.keras_handle import KerasHandle

log = logger(__name__)


def coordinated_callback(
    handle: KerasHandle,
    handler: PreemptionHandler,
    manager: CheckpointManager,
    *,
    save_weights_only: bool,
) -> Any:
    """The Keras callback: on a SIGTERM anywhere, all workers commit one step and exit 143."""
    import tensorflow as tf
    from tensorflow.python.util import deprecation

    from vtrain_tensorflow.keras_checkpoint import writer
    from vtrain_tensorflow.progress import Progress

    keras: Any = handle.keras
    resolver = handle.strategy.cluster_resolver

    class CoordinatedPreemption(keras.callbacks.Callback):  # type: ignore[misc]
        """Asks TensorFlow's PreemptionCheckpointHandler after every batch whether to save now."""

        def __init__(self) -> None:
            super().__init__()
            self.handler = handler
            self.manager = manager
            self.progress = Progress(lambda: manager.latest_step() or 0)
            self.coordinator: Any = None
            self._folder: str | None = None
            self._logs: dict[str, Any] | None = None
            self._posted = False
            self._record: Any = None  # the KerasCheckpoint `_save` committed, for `_exit`
            self._uri = ""

        def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
            self.handler.install()
            self._folder = tempfile.mkdtemp(prefix="vtrain-preemption-")
            config = tf.distribute.experimental.TerminationConfig(
                # Polled once a second on TensorFlow's thread (a signal during a long batch
                # still reaches the peers): `handle.preempted`, vtrain's flag. A function here
                # also keeps TensorFlow from replacing that handler with its own.
                termination_watcher_fn=lambda: handle.preempted,
                exit_fn=self._exit,
                grace_period=0,  # save at the agreed batch, then leave: Vertex gives 30 s
                save_fn=self._save,
            )
            self.coordinator = tf.distribute.experimental.PreemptionCheckpointHandler(
                resolver, tf.train.Checkpoint(), self._folder, config
            )

        def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            self.progress.epoch_begin(epoch, self.params.get("steps"))

        def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
            self.progress.batch_end(batch)
            self._logs = logs
            if handle.preempted and not self._posted:
                # Post the notice now rather than at the watcher's next poll (up to 1 s, many
                # batches later): the save then lands at the batch after the signal.
                self._posted = True
                self.coordinator._maybe_set_received_own_sigterm()
            # Every worker calls it once per batch, so their counts agree on the batch to save at.
            with deprecation.silence():  # its save reads a property it marks deprecated itself
                self.coordinator.save_checkpoint_if_preempted()

        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            self.progress.epoch_end(self.params.get("steps"))

        def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
            if not self.handler.requested:
                self.handler.uninstall()
            self._close()

        def _close(self) -> None:
            coordinator, self.coordinator = self.coordinator, None
            if coordinator is not None:
                # What its __del__ does, now rather than at some garbage collection: its
                # threads wait on the coordination service, which goes away with the chief.
                coordinator._stop_cluster_wise_termination_watcher_thread()
                coordinator._stop_poll_termination_signal_thread()
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
                self._folder = None

        def _save(self) -> None:
            record = self.progress.record(
                at_epoch_end=False,
                steps=self.params.get("steps"),
                monitor=None,
                logs=self._logs,
                mode=None,
                weights_only=save_weights_only,
            )
            self._record = record
            self._uri = self.manager.save(record.step, writer(self.model, record), blocking=True)

        def _exit(self) -> None:
            record = self._record
            detail = f"(epoch {record.epoch + 1}, with every worker)"
            if self.manager.is_leader:
                detail += f" to {self._uri}"
            left = self.handler.time_left()
            if left is None:
                detail += ", on a peer's signal"
            else:
                detail += f", {self.handler.grace - left:.1f} s after the signal"
            log.info(f"\n{committed_line(record.step, detail)}")
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
            self.handler.exit()

    return CoordinatedPreemption()
