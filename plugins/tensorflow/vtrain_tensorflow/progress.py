"""Where `fit` is, as checkpoints number it: the epoch, batches into it, and the global step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vtrain_tensorflow.keras_checkpoint import KerasCheckpoint, finite


class Progress:
    """Follows the epoch and batch callbacks; turns the current moment into a checkpoint record.

    The step is the number of batches trained: `epoch * steps_per_epoch + batches`
    when Keras knows the epoch's length, so that a run resumed from an epoch's end
    numbers its saves exactly as an uninterrupted run would. When it does not,
    counting goes on from `first_step()` (the newest committed step).
    """

    def __init__(self, first_step: Callable[[], int]) -> None:
        self._first_step = first_step
        self.epoch = 0
        self.step: int | None = None
        self.in_epoch = 0
        """Batches done in the current epoch."""
        self._last_batch = -1

    def epoch_begin(self, epoch: int, steps: int | None) -> None:
        """At `on_epoch_begin`: `steps` is `params["steps"]`, None when Keras does not know it."""
        self.epoch = epoch
        self.in_epoch = 0
        self._last_batch = -1
        if steps:
            self.step = epoch * steps
        elif self.step is None:
            self.step = self._first_step()

    def batch_end(self, batch: int) -> None:
        """At `on_train_batch_end`: several batches may have run at once (steps_per_execution)."""
        if self.step is None:  # a fit without on_epoch_begin: nothing better to go by
            self.step = self._first_step()
        done = batch - self._last_batch if batch > self._last_batch else batch + 1
        self._last_batch = batch
        self.in_epoch += done
        self.step += done

    def epoch_end(self, steps: int | None) -> None:
        """At `on_epoch_end`; for a callback without batch hooks, the whole epoch is counted here.

        (ParameterServerStrategy refuses callbacks with batch hooks.)
        """
        if self.step is None:
            self.step = self._first_step()
        if steps:
            self.step = (self.epoch + 1) * steps
            self.in_epoch = steps
        elif self.in_epoch == 0:
            self.step += 1  # nothing to count batches by: at least keep steps apart

    def record(
        self,
        *,
        at_epoch_end: bool,
        steps: int | None,
        monitor: str | None,
        logs: dict[str, Any] | None,
        mode: str | None,
        weights_only: bool,
    ) -> KerasCheckpoint:
        """The record of a save made now, at an epoch's end or after the last batch."""
        # The last batch of an epoch completes it: resuming must not replay it.
        ended = at_epoch_end or bool(steps and self.in_epoch >= steps)
        value = finite((logs or {}).get(monitor)) if monitor else None
        return KerasCheckpoint(
            step=self.step or 0,
            epoch=self.epoch,
            batch=None if ended else self.in_epoch,
            monitor=monitor,
            value=value,
            mode=mode,
            weights_only=weights_only,
        )
