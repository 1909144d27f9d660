"""XGBoost training callbacks: commit the booster every N rounds; report the tuning metric.

This module imports XGBoost (its callbacks subclass `TrainingCallback`); the
handle imports it only when asked for callbacks. The writing itself runs on a
background `WriteQueue`; training ends when it is done. Rounds are counted on the
booster (`num_boosted_rounds()`), not by XGBoost's per-call epoch, which starts
at 0 again in a call that resumes from a saved model. A SIGTERM (a preemption)
ends training at the next round, committed: see `CheckpointCallback`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Mapping
from typing import Any

from xgboost.callback import TrainingCallback

from vtrain import UsageError
from vtrain.checkpoints import CheckpointManager
from vtrain.plugins.handle import Handle
from vtrain.preemption import EXIT_STATUS, PreemptionHandler, committed_line
from vtrain_xgboost.state import MODEL_FILE, WORLD_FILE, booster_bytes, world_bytes
from vtrain_xgboost.write_queue import WriteQueue


class CheckpointCallback(TrainingCallback):  # type: ignore[misc]
    """Commits the booster every `every` rounds and at the end (the leader; elsewhere nothing).

    Beside it goes the number of trainers, `world_size`: the only data position
    boosting has (every round reads the whole share).

    During training SIGTERM only sets a flag. After each round the trainers agree
    whether any of them got it (an allreduce of one number); if so the leader
    commits that round before going on, says `committed step N`, and every trainer
    exits 143, so that the platform restarts them and they resume from it.
    """

    def __init__(
        self, manager: CheckpointManager, every: int, queue: WriteQueue, world_size: int = 1
    ) -> None:
        super().__init__()
        self.manager = manager
        self.world_size = world_size
        self.every = every
        self.queue = queue
        self.saved: int | None = None
        """The round last committed by this callback."""
        self._handler: PreemptionHandler | None = None

    def before_training(self, model: Any) -> Any:
        """Catch SIGTERM until training ends (not when the script has its own handler)."""
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        ):
            self._handler = PreemptionHandler().install()
        return model

    def after_iteration(self, model: Any, epoch: int, evals_log: Mapping[str, Any]) -> bool:
        """Commit on every `every`-th round, and on the round after a SIGTERM (then exit)."""
        rounds = model.num_boosted_rounds()
        if rounds % self.every == 0:
            self._save(model, rounds)
        if self._preempted():
            if rounds != self.saved:
                self._save(model, rounds)
            self.queue.flush()
            if self.manager.is_leader:
                print(committed_line(rounds), flush=True)
            self._exit()
        return False

    def after_training(self, model: Any) -> Any:
        """Commit the final round, so that a job restarted after the end trains nothing more."""
        self._release()
        rounds = model.num_boosted_rounds()
        if rounds and rounds != self.saved:
            self._save(model, rounds)
        self.queue.flush()
        return model

    def _preempted(self) -> bool:
        """True when any trainer got SIGTERM: a trainer that left alone would stall the rest."""
        requested = self._handler is not None and self._handler.requested
        if self.world_size <= 1:
            return requested
        import numpy as np
        from xgboost import collective

        flags = collective.allreduce(np.array([int(requested)], np.int32), collective.Op.MAX)
        return bool(flags[0])

    def _exit(self) -> None:
        if self._handler is not None and self._handler.requested:
            self._handler.exit()  # settles pending saves within the grace, then 143
        self._release()
        # A peer was preempted: leave with it, as the restart resumes from this round.
        raise SystemExit(EXIT_STATUS)

    def _release(self) -> None:
        if self._handler is not None and not self._handler.requested:
            self._handler.uninstall()
            self._handler = None

    def _save(self, model: Any, rounds: int) -> None:
        if self.manager.is_leader:
            # The bytes now, on the training thread: the booster changes in the next round.
            raw = booster_bytes(model)
            files = {MODEL_FILE: raw, WORLD_FILE: world_bytes(self.world_size)}
            self.queue.submit(self.manager.save, rounds, files)
        self.saved = rounds


class ReportCallback(TrainingCallback):  # type: ignore[misc]
    """Reports one evaluation metric to the tuning service every `every` rounds (leader only).

    `metric` is named as XGBoost prints it: ``<eval name>-<metric>``, e.g. "validation-rmse".
    """

    def __init__(
        self, metric: str, every: int, tag: str | None, handle: Handle, queue: WriteQueue
    ) -> None:
        super().__init__()
        self.queue = queue
        self.metric = metric
        self.every = every
        self.tag = tag
        self.handle = handle

    def after_iteration(self, model: Any, epoch: int, evals_log: Mapping[str, Any]) -> bool:
        """Report the latest value on every `every`-th round."""
        rounds = model.num_boosted_rounds()
        if rounds % self.every == 0:
            value = latest(evals_log, self.metric)  # on every replica: all fail alike
            if self.handle.is_leader:
                self.queue.submit(self._report, value, rounds)
        return False

    def _report(self, value: float, rounds: int) -> None:
        self.handle.report(value, self.tag, step=rounds)

    def after_training(self, model: Any) -> Any:
        """Wait for the reports handed to the queue."""
        self.queue.flush()
        return model


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
