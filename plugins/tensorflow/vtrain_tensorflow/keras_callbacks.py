"""Keras callbacks made for the Keras in use (tf-keras or Keras 3), built on first use."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vtrain.track import Track

Report = Callable[..., bool]
"""`handle.report`: writes the tuning metric from the leader, with the handle's environment."""


def hypertune_callback(keras: Any, report: Report, monitor: str, tag: str | None = None) -> Any:
    """A callback that reports `logs[monitor]` through `report` after every epoch."""

    class HypertuneCallback(keras.callbacks.Callback):  # type: ignore[misc]
        """Reports the tuning metric each epoch (the leader writes; other replicas skip)."""

        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            value = (logs or {}).get(monitor)
            if value is not None:
                report(float(value), tag, step=epoch + 1)

    return HypertuneCallback()


EPOCH_END_SECONDS = 600.0
"""How long an epoch's end may wait for its last steps before the watchdog judges it."""


def progress_callback(keras: Any, track: Track | None = None) -> Any:
    """A callback that marks each step `fit` trains, for the watchdog and the live view; with
    `track`'s autolog on, each epoch's logs (loss, metrics, validation) go to its run, at the
    epoch's number from 1 (as the tuning metric's reports are numbered)."""
    from vtrain.progress import tracker
    from vtrain_tensorflow.progress import Progress

    class ProgressCallback(keras.callbacks.Callback):  # type: ignore[misc]
        """Marks every training step (numbered as checkpoints number them) and every
        evaluation or prediction batch (progress, no step) in this process's tracker.

        Its batch hooks add 1 to 2 us to a step (bench/progress_cost.py), under 1% of any
        step longer than 0.2 ms, and never make fit wait for a step: Keras 3's TensorFlow
        backend runs no callback asynchronously (IS_THREAD_SAFE is False) and converts each
        batch's logs to numbers whether or not a callback has batch hooks; tf-keras hands
        this one the logs as tensors (`_supports_tf_logs`), unconverted, which is also what
        lets it run under ParameterServerStrategy (which refuses other batch hooks).
        """

        def __init__(self) -> None:
            super().__init__()
            self._supports_tf_logs = True  # after tf-keras' __init__, which sets it False
            # Unknown epoch lengths: go on from the step the tracker has (a commit's).
            self.progress = Progress(lambda: tracker().step or 0)
            self._epoch_end: Any = None

        def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
            epochs, steps = self.params.get("epochs"), self.params.get("steps")
            if epochs and steps:  # fit's whole length, for a TrainJob's progress and ETA
                tracker().total = int(epochs) * int(steps)

        def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            self.progress.epoch_begin(epoch, self.params.get("steps"))

        def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
            self.progress.batch_end(batch)
            tracker().stepped(self.progress.step, explicit=True)
            steps = self.params.get("steps")
            if steps is not None and batch + 1 >= steps and self._epoch_end is None:
                # The epoch's end waits for the steps still running elsewhere (a
                # ParameterServerStrategy coordinator's join, behind a restarted ps): not
                # one step's time. The block ends at on_epoch_end.
                self._epoch_end = tracker().long("the epoch's end", EPOCH_END_SECONDS)
                self._epoch_end.__enter__()

        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            self._end_epoch()
            if track is not None and track.auto:
                track.logged(logs or {}, epoch + 1)

        def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
            self._end_epoch()

        def _end_epoch(self) -> None:
            if self._epoch_end is not None:
                block, self._epoch_end = self._epoch_end, None
                block.__exit__(None, None, None)

        def on_test_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
            tracker().alive()

        def on_predict_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
            tracker().alive()

    return ProgressCallback()
