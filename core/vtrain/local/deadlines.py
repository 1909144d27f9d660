"""The moments a local job waits for, besides its replicas' output and exits, and its wait bounds.

The supervisor's loop sleeps until the soonest of them: an injected kill, the
job's --timeout, the end of the grace after the chief's success or of a stop's
grace period, a replica's SIGKILL after its SIGTERM, the held notes, and the
next "who is silent" line after --quiet-after seconds without output.
"""

from __future__ import annotations

import time

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from vtrain.local.plan import Kill, Plan

# vtrain's notes (the job's header) wait this long after the replicas' start, unless a
# replica prints first: writing them compiles the redaction patterns, milliseconds of CPU
# that the replicas, all starting at once, would otherwise wait for.
NOTES_AFTER_SECONDS = 0.25


class Deadlines:
    """When each timer of the job fires (monotonic seconds; None: not set)."""

    def __init__(self, plan: Plan) -> None:
        self.t0 = time.monotonic()
        """The job's start: --kill and --timeout count from it."""
        self._kills: list[Kill] = list(plan.kills)  # soonest first
        self._timeout = plan.timeout
        self._quiet_after = plan.quiet_after
        self.notes: float | None = None
        """When the held notes are written, unless something is written before."""
        self.success: float | None = None
        """The end of the grace after the chief's success."""
        self.stop: float | None = None
        """The end of the grace period of a stop: SIGKILL for what still runs."""
        self.sigkill: dict[str, float] = {}
        """Replica -> when it gets SIGKILL after its own SIGTERM."""

    def start(self, now: float) -> None:
        """The replicas start: --kill and --timeout count from `now`."""
        self.t0 = now

    def started(self, now: float) -> None:
        """The replicas have started: the held notes follow soon."""
        self.notes = now + NOTES_AFTER_SECONDS

    def due(self, name: str, now: float) -> bool:
        """True, once, when timer `name` (notes, success, stop) has fired."""
        when = getattr(self, name)
        if when is None or now < when:
            return False
        setattr(self, name, None)
        return True

    def due_kills(self, now: float) -> list[Kill]:
        """The --kill faults whose moment has come, each once."""
        due = []
        while self._kills and self.t0 + self._kills[0].seconds <= now:
            due.append(self._kills.pop(0))
        return due

    def timed_out(self, now: float) -> bool:
        """True once --timeout has passed."""
        return self._timeout is not None and now >= self.t0 + self._timeout

    def due_sigkills(self, now: float) -> list[str]:
        """The replicas whose SIGKILL after their SIGTERM is due, each once."""
        due = [name for name, when in self.sigkill.items() if now >= when]
        for name in due:
            del self.sigkill[name]
        return due

    def wait(self, now: float, *, ended: bool, heard: float | None) -> float | None:
        """Seconds until the soonest timer (None: none is set). `ended`: the job's outcome is
        known (no --timeout any more); `heard`: when a replica last printed, while silence
        is worth a line."""
        times = [*self.sigkill.values()]
        if self._kills:
            times.append(self.t0 + self._kills[0].seconds)
        if self._timeout is not None and not ended:
            times.append(self.t0 + self._timeout)
        times += [t for t in (self.stop, self.success, self.notes) if t is not None]
        if heard is not None:
            times.append(heard + self._quiet_after)
        return max(0.0, min(times) - now) if times else None

    def silent(self, now: float, heard: float) -> bool:
        """True when no replica has printed for --quiet-after seconds."""
        return now >= heard + self._quiet_after
