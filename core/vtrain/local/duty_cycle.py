"""`--slow`: a slow machine, rehearsed by stopping and continuing a replica in a duty cycle.

A replica made FACTOR times slower runs PERIOD / FACTOR seconds, then is stopped
(SIGSTOP) for the rest of each PERIOD, from the moment its `--slow` says on, for
the rest of the job, across its restarts (the machine stays slow). The supervisor
sends the signals; this module only says when (`due`), so that it is tested
without processes.
"""

from __future__ import annotations

import signal

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from vtrain.local.faults import Slow

PERIOD = 0.5
"""Seconds of one run-and-stop cycle: short against a step, long against the signals' cost."""


class DutyCycles:
    """When each slowed replica is stopped and continued (monotonic seconds)."""

    def __init__(self, slows: Sequence[Slow]) -> None:
        self._pending = sorted(slows, key=lambda s: s.seconds)
        self._cycles: dict[str, list[float]] = {}
        """Replica -> [factor, 1.0 while it runs else 0.0, the next switch]."""

    def next(self, t0: float) -> float | None:
        """The soonest moment something is due; None: nothing is slowed."""
        times = [c[2] for c in self._cycles.values()]
        if self._pending:
            times.append(t0 + self._pending[0].seconds)
        return min(times) if times else None

    def due(self, now: float, t0: float) -> tuple[list[Slow], list[tuple[str, signal.Signals]]]:
        """(the slowdowns that begin now, the signals to send now: (replica, SIGSTOP/SIGCONT))."""
        begun = []
        while self._pending and t0 + self._pending[0].seconds <= now:
            slow = self._pending.pop(0)
            begun.append(slow)
            self._cycles[slow.replica_name] = [slow.factor, 1.0, now + PERIOD / slow.factor]
        sent = []
        for name, cycle in self._cycles.items():
            factor, running, switch = cycle
            if now < switch:
                continue
            if running:
                sent.append((name, signal.SIGSTOP))
                cycle[1:] = [0.0, now + PERIOD * (1 - 1 / factor)]
            else:
                sent.append((name, signal.SIGCONT))
                cycle[1:] = [1.0, now + PERIOD / factor]
        return begun, sent

    def held(self) -> list[str]:
        """The slowed replicas stopped now, in their cycle (to continue when the job stops)."""
        return [name for name, cycle in self._cycles.items() if not cycle[1]]

    def started(self, name: str, now: float) -> None:
        """Replica `name` (re)started now: it runs, and its cycle goes on from here."""
        cycle = self._cycles.get(name)
        if cycle is not None:
            cycle[1:] = [1.0, now + PERIOD / cycle[0]]
