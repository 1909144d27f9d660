"""`handle.model_checkpoint()`: Keras' ModelCheckpoint, every save committed by CheckpointManager.

It takes ModelCheckpoint's own arguments and decides when to save as Keras
does; each save then goes through `CheckpointManager.save`, so it is atomic on
a local disk, on a /gcs FUSE mount and on gs://, only the leader's copy lands,
keep / keep_every apply, and the epoch, step and monitored value go with it.
Every replica runs it: under tf-keras multi-worker training saving may run
collective ops, so the others save too, into a private folder. Unless
`blocking`, Keras writes the model to local disk and training goes on while
the step is synced or uploaded and committed in the background; the end of
`fit` waits for it.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from vtrain.errors import UsageError
from vtrain.log import logger
from vtrain.plugins.handle import COMMIT_SECONDS
from vtrain.progress import tracker

if TYPE_CHECKING:
    from vtrain_tensorflow.keras_checkpoint import KerasCheckpoint
    from vtrain_tensorflow.keras_handle import KerasHandle

log = logger(__name__)

MODES = ("auto", "min", "max")
# Keras' own rule for mode="auto", by the metric's name: these grow as the model improves.
_GROWING = ("acc", "auc", "precision", "recall", "fmeasure", "f1")


def resolve_mode(monitor: str, mode: str, *, needed: bool) -> str | None:
    """ "min" or "max" for `monitor`; None when "auto" cannot tell and nothing depends on it."""
    if mode not in MODES:
        raise UsageError(
            "unknown mode",
            source="model_checkpoint(mode=...)",
            value=mode,
            expected=" or ".join(repr(m) for m in MODES),
        )
    if mode != "auto":
        return mode
    name = monitor.removeprefix("val_").lower()
    if name.endswith(("loss", "error")):
        return "min"
    if any(word in name for word in _GROWING):
        return "max"
    if needed:
        raise UsageError(
            "cannot tell whether the monitored value should grow or shrink",
            source="model_checkpoint(monitor=...)",
            value=monitor,
            expected="a loss, error, accuracy, AUC, precision or recall, or mode='min' or 'max'",
            hint=f"pass mode='min' or mode='max' for {monitor!r}",
        )
    return None


def check_save_freq(save_freq: object) -> str | int:
    """ "epoch" or a number of batches, as ModelCheckpoint takes it."""
    if save_freq == "epoch":
        return "epoch"
    if isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq < 1:
        raise UsageError(
            "not a save frequency",
            source="model_checkpoint(save_freq=...)",
            value=save_freq,
            expected="'epoch' or a number of batches >= 1",
        )
    return save_freq


def better(value: float, than: float | None, mode: str) -> bool:
    """True when `value` improves on `than` (None: nothing to beat yet)."""
    return than is None or (value < than if mode == "min" else value > than)


def best_value(found: list[KerasCheckpoint], monitor: str, mode: str) -> float | None:
    """The best value among committed records of the same monitor and mode."""
    values = [r.value for r in found if r.monitor == monitor and r.mode == mode]
    best = None
    for value in values:
        if value is not None and better(value, best, mode):
            best = value
    return best


def model_checkpoint(
    handle: KerasHandle,
    monitor: str = "val_loss",
    verbose: int = 0,
    save_best_only: bool = False,
    save_weights_only: bool = False,
    mode: str = "auto",
    save_freq: str | int = "epoch",
    initial_value_threshold: float | None = None,
    *,
    keep: int | None = None,
    keep_every: int | None = None,
    directory: str | None = None,
    blocking: bool = False,
    data: Any = None,
) -> Any:
    """Keras' ModelCheckpoint, with ModelCheckpoint's arguments, every save a committed step.

    Atomic on a local disk, /gcs and gs://; only the leader's copy lands;
    `keep` newest steps (plus every `keep_every`-th batch step) are kept;
    each step records its epoch, batch and `logs[monitor]` for `resume`
    and `best`. Every replica must run it, as Keras' own. Each step is
    committed in the background while training goes on, unless `blocking`.
    Saves go to `checkpoints` (`<AIP_CHECKPOINT_DIR>/keras`), or to `directory`.
    With `data` (the `handle.batches(...)` that `fit` trains on) every
    worker's data position after the step just trained goes into the same commit.
    """
    from vtrain_tensorflow.keras_checkpoint import records, writer
    from vtrain_tensorflow.progress import Progress

    direction = resolve_mode(monitor, mode, needed=save_best_only)
    frequency = check_save_freq(save_freq)
    every = 0 if frequency == "epoch" else int(frequency)
    keras: Any = handle.keras
    manager = handle.checkpoint_manager(directory, keep=keep, keep_every=keep_every)
    positions = _check_data(data)

    class VtrainModelCheckpoint(keras.callbacks.Callback):  # type: ignore[misc]
        """ModelCheckpoint's decisions; CheckpointManager's commit."""

        def __init__(self) -> None:
            super().__init__()
            self.manager = manager
            self.monitor = monitor
            self.mode = direction
            self.save_best_only = save_best_only
            self.save_weights_only = save_weights_only
            self.save_freq = frequency
            self.verbose = verbose
            self.best: float | None = initial_value_threshold
            self.progress = Progress(lambda: manager.latest_step() or 0)
            self._since_save = 0
            self._last_batch: int | None = None

        def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
            if self.save_best_only and self.mode is not None:
                # A restarted job must not take its first epoch for an improvement, or a
                # worse model would be saved, and with `keep` the real best deleted.
                committed = best_value(records(self.manager), self.monitor, self.mode)
                if committed is not None and better(committed, self.best, self.mode):
                    self.best = committed

        def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            self.progress.epoch_begin(epoch, self.params.get("steps"))

        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            self.progress.epoch_end(self.params.get("steps"))
            if self.save_freq == "epoch":
                self._save(logs, at_epoch_end=True)

        def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
            self.manager.wait()  # the last step is committed when fit returns, or fit fails

        def _save(self, logs: dict[str, Any] | None, *, at_epoch_end: bool) -> None:
            record = self.progress.record(
                at_epoch_end=at_epoch_end,
                steps=self.params.get("steps"),
                monitor=self.monitor,
                logs=logs,
                mode=self.mode,
                weights_only=self.save_weights_only,
            )
            said = f"Epoch {record.epoch + 1}: "
            if self.save_best_only:
                if record.value is None:
                    log.warning(
                        f"vtrain: {said}can save the best model only with {self.monitor} "
                        "in the logs; not saved"
                    )
                    return
                assert self.mode is not None
                if not better(record.value, self.best, self.mode):
                    self._say(f"{said}{self.monitor} did not improve from {self.best:.5f}")
                    return
                was = "inf" if self.best is None else f"{self.best:.5f}"
                said += f"{self.monitor} improved from {was} to {record.value:.5f}, "
                self.best = record.value
            position = None
            if positions is not None:
                from vtrain_tensorflow.positions import gather

                # At an epoch's end the stream has reached it; mid-epoch, the step just trained.
                mine = positions.position(None if at_epoch_end else self._last_batch)
                place = handle._place("model_checkpoint(data=)")
                position = gather(self.manager, record.step, mine, place, handle.barrier)
            save = writer(self.model, record, position)
            tracker().reached(record.step, committed=self.manager.is_leader)
            # A commit the loop waits for is no step: bounded by its own waits, not the step's.
            waiting = tracker().long("the checkpoint commit", COMMIT_SECONDS)
            with waiting if blocking else contextlib.nullcontext():
                uri = self.manager.save(record.step, save, blocking=blocking)
            done = "saved" if blocking else "saving (committed in the background)"
            self._say(f"{said}{done} checkpoint step {record.step} to {uri}")

        def _say(self, message: str) -> None:
            # Every replica saves; only the one whose copy lands says so.
            if self.verbose > 0 and self.manager.is_leader:
                log.info(f"\n{message}")

    class EveryNBatches(VtrainModelCheckpoint):
        """Saves every `save_freq` batches: the batch hook only a batch frequency needs.

        Without it the callback stays epoch-level, as ParameterServerStrategy
        requires and Keras 3 likes (it may then run batches ahead asynchronously).
        """

        def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
            before = self.progress.in_epoch
            self.progress.batch_end(batch)
            self._last_batch = batch
            self._since_save += self.progress.in_epoch - before
            if self._since_save >= every:
                self._since_save = 0
                self._save(logs, at_epoch_end=False)

    return VtrainModelCheckpoint() if frequency == "epoch" else EveryNBatches()


def _check_data(data: Any) -> Any:
    """`data` as model_checkpoint takes it: None, or the StreamBatches that `fit` trains on."""
    from vtrain_tensorflow.stream_batches import StreamBatches

    if data is None or isinstance(data, StreamBatches):
        return data
    raise UsageError(
        "cannot tell which records a step trained",
        source="model_checkpoint(data=...)",
        value=data,
        expected="the handle.batches(...) whose dataset fit trains on",
        hint="fit reads ahead of training: a Stream's own position would skip what it prefetched",
    )
