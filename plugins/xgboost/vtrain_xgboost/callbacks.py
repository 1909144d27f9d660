"""XGBoost training callbacks: mark each round; commit the booster every N rounds; report the
tuning metric.

This module imports XGBoost (its callbacks subclass `TrainingCallback`); the
handle imports it only when asked for callbacks. A commit is the handle's
`save_checkpoint`: the booster's bytes are taken on the training thread, and the
write and the commit run on the core's background save, so training goes on
meanwhile; training ends once the last is committed. Rounds are counted on the
booster (`num_boosted_rounds()`), not by XGBoost's per-call epoch, which starts
at 0 again in a call that resumes from a saved model. A SIGTERM (a preemption)
ends training at the next round, committed: see `CheckpointCallback`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xgboost.callback import TrainingCallback

from vtrain import UsageError, preemption
from vtrain.plugins.handle import Handle
from vtrain.progress import tracker
from vtrain.track import Track


class ProgressCallback(TrainingCallback):  # type: ignore[misc]
    """Marks each round as a step, numbered as commits number them, in this process's
    progress tracker: what the watchdog and `vtrain local run`'s live view count. With
    the handle's `track.autolog()` on, the round's evaluation results go to the run too
    (``validation-rmse``, as XGBoost prints them)."""

    def __init__(self, track: Track | None = None) -> None:
        super().__init__()
        self.track = track

    def after_iteration(self, model: Any, epoch: int, evals_log: Mapping[str, Any]) -> bool:
        """A round ended (its evaluation included)."""
        rounds = model.num_boosted_rounds()
        tracker().stepped(rounds, explicit=True)
        if self.track is not None and self.track.auto:
            last = {
                f"{data}-{name}": values[-1]
                for data, metrics in evals_log.items()
                for name, values in metrics.items()
                if values
            }
            self.track.logged(last, rounds)
        return False


class CheckpointCallback(TrainingCallback):  # type: ignore[misc]
    """Commits the booster every `every` rounds and at the end (the leader; elsewhere nothing).

    Beside it goes the number of trainers, `world_size`: the only data position
    boosting has (every round reads the whole share).

    During training SIGTERM only sets a flag. After each round the trainers agree
    whether any of them got it (`handle.preempted`: an allreduce of one number); if
    so the leader commits that round before going on, says `committed step N`, and
    every trainer exits 143, so that the platform restarts them and they resume from it.
    """

    def __init__(self, handle: Handle, every: int) -> None:
        super().__init__()
        self.handle = handle
        self.every = every
        self.saved: int | None = None
        """The round last committed by this callback."""

    def before_training(self, model: Any) -> Any:
        """Catch SIGTERM until training ends (not when the script has its own handler)."""
        preemption.watch()
        return model

    def after_iteration(self, model: Any, epoch: int, evals_log: Mapping[str, Any]) -> bool:
        """Commit on every `every`-th round, and on the round after a SIGTERM (then exit)."""
        rounds = model.num_boosted_rounds()
        # Read on every trainer after every round: a trainer that left alone would stall the rest.
        if self.handle.preempted or rounds % self.every == 0:
            self._save(model, rounds)  # once preempted, the last: it exits 143
        return False

    def after_training(self, model: Any) -> Any:
        """Commit the final round, so that a job restarted after the end trains nothing more."""
        rounds = model.num_boosted_rounds()
        if rounds and rounds != self.saved:
            self._save(model, rounds)
        self.handle.checkpoints.wait()
        preemption.unwatch()  # no save is coming: SIGTERM stops the process at once again
        return model

    def _save(self, model: Any, rounds: int) -> None:
        self.saved = rounds
        self.handle.save_checkpoint(rounds, model)


class ReportCallback(TrainingCallback):  # type: ignore[misc]
    """Reports one evaluation metric to the tuning service every `every` rounds (leader only).

    `metric` is named as XGBoost prints it: ``<eval name>-<metric>``, e.g. "validation-rmse".
    """

    def __init__(self, metric: str, every: int, tag: str | None, handle: Handle) -> None:
        super().__init__()
        self.metric = metric
        self.every = every
        self.tag = tag
        self.handle = handle

    def after_iteration(self, model: Any, epoch: int, evals_log: Mapping[str, Any]) -> bool:
        """Report the latest value on every `every`-th round."""
        rounds = model.num_boosted_rounds()
        if rounds % self.every == 0:
            value = latest(evals_log, self.metric)  # on every replica: all fail alike
            self.handle.report(value, self.tag, step=rounds)  # writes on the leader alone
        return False


def latest(evals_log: Mapping[str, Mapping[str, Any]], metric: str) -> float:
    """The newest value of ``<eval name>-<metric>`` in XGBoost's evaluation log."""
    for data, metrics in evals_log.items():
        for name, values in metrics.items():
            if f"{data}-{name}" == metric and values:
                value = values[-1]
                # xgb.cv logs (mean, std) pairs; report the mean.
                return float(value[0] if isinstance(value, tuple) else value)
    known = [f"{d}-{n}" for d, metrics in evals_log.items() for n in metrics]
    raise UsageError(
        "no such evaluation result",
        source="callbacks(metric=)",
        value=metric,
        expected="one of "
        + (", ".join(known) if known else "nothing: pass evals=[(dmatrix, name)]"),
        hint="name it as XGBoost prints it, <eval name>-<metric>",
    )
