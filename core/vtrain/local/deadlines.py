"""The moments a local job waits for, besides its replicas' output and exits, and its wait bounds.

The supervisor's loop sleeps until the soonest of them: an injected kill, the
job's --timeout, the end of the grace after the chief's success or of a stop's
grace period, a replica's SIGKILL after its SIGTERM, the held notes, and the
next "who is silent" line after --quiet-after seconds without output, the next look
at the trainers' progress, and the --slow replicas' duty cycles.
"""

from __future__ import annotations

import time

from vtrain.local.duty_cycle import DutyCycles

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from vtrain.local.plan import Kill, Plan

LOOK_EVERY = 1.0
"""Seconds between two looks at the trainers' progress (the straggler check)."""
# vtrain's notes (the job's header) wait this long after the replicas' start, unless a
# replica prints first: writing them compiles the redaction patterns, milliseconds of CPU
# that the replicas, all starting at once, would otherwise wait for.
NOTES_AFTER_SECONDS = 0.25


class Deadlines:
    """When each timer of the job fires (monotonic seconds; None: not set)."""

    def __init__(self, plan: Plan, view_every: float | None = None) -> None:
        """`view_every`: seconds between two redraws of the live view (or progress lines)."""
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
        self.duty = DutyCycles(plan.slows)
        """When each --slow replica is stopped and continued."""
        self.look: float | None = None
        """The next look at the trainers' progress."""
        self._view_every = view_every
        self.view: float | None = None
        """The next redraw of the live view, or the next progress lines (`vtrain.local.live`)."""

    def start(self, now: float) -> None:
        """The replicas start: --kill and --timeout count from `now`."""
        self.t0 = now

    def started(self, now: float) -> None:
        """The replicas have started: the held notes follow soon."""
        self.notes = now + NOTES_AFTER_SECONDS
        self.look = now + LOOK_EVERY
        if self._view_every is not None:
            self.view = now + self._view_every

    def due(self, name: str, now: float) -> bool:
        """True, once, when timer `name` (notes, success, stop) has fired."""
        when = getattr(self, name)
        if when is None or now < when:
            return False
        setattr(self, name, None)
        return True

    def due_view(self, now: float) -> bool:
        """True when the live view (or the progress lines) is due; the next is then set."""
        if self.view is None or self._view_every is None or now < self.view:
            return False
        self.view = now + self._view_every
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
        timers = (self.stop, self.success, self.notes, self.look, self.view)
        times += [t for t in (*timers, self.duty.next(self.t0)) if t is not None]
        if heard is not None:
            times.append(heard + self._quiet_after)
        return max(0.0, min(times) - now) if times else None

    def silent(self, now: float, heard: float) -> bool:
        """True when no replica has printed for --quiet-after seconds."""
        return now >= heard + self._quiet_after
