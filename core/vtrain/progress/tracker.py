"""`Tracker`: this process's progress, marked by the handle and read by the watchdog's thread.

Marking is the training loop's cost, so a mark is a few attribute writes under the
GIL, no lock and no I/O: the watchdog's thread reads them once a second, and a read
that lands between two writes sees the mark a second later.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from collections.abc import Iterator

from vtrain.progress.bound import RECENT, Facts
from vtrain.progress.file import DONE, LONG, STARTING, TRAINING, WAITING, Snapshot

_RATE_WINDOW = 64
"""Step marks the rate is taken over."""


class Tracker:
    """Steps, step times, the last commit and what the loop does, for this process."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.started = time.monotonic()
        self.marks = 0
        self.total: int | None = None
        """The steps the loop will train, where it said (`handle.step(n, total=)`, Keras' fit)."""
        self.metrics: dict[str, float] = {}
        """The last value of each metric the leader reported or tracked."""
        self.first: tuple[float, int] | None = None
        """When (monotonic) the first step ended, and its number."""
        self.step: int | None = None
        self.last: float | None = None
        self.commit: int | None = None
        self.explicit = False
        """True once the loop called `handle.step()`: batches taken then count as no step."""
        self.done = False
        self._times: deque[float] = deque(maxlen=RECENT)
        self._recent: deque[tuple[float, int]] = deque(maxlen=_RATE_WINDOW)
        self._doing: list[str] = []
        self._long: list[tuple[float, float]] = []

    # -- marks, from the handle and the plugins' helpers ---------------------------------

    def stepped(self, step: int | None = None, *, explicit: bool = False) -> None:
        """A step ended (its number, where the loop counts them)."""
        now = time.monotonic()
        if explicit:
            self.explicit = True
        if self.last is not None:
            self._times.append(now - self.last)
        self.last = now
        self.marks += 1
        self.step = (0 if self.step is None else self.step) + 1 if step is None else step
        self._recent.append((now, self.step))
        if self.first is None:
            self.first = (now, self.step)

    def batch(self) -> None:
        """A batch was taken from a stream adapter: a step, unless the loop marks its own."""
        if self.explicit:
            self.alive()
        else:
            self.stepped()

    def alive(self) -> None:
        """Progress that is no step of its own (a batch of an explicit loop)."""
        self.last = time.monotonic()

    def reached(self, step: int, *, committed: bool = False) -> None:
        """The loop saves `step` (`committed`: this process commits it, as the leader)."""
        if committed:
            self.commit = step
        if self.step is None or step > self.step:
            self.stepped(step)
        else:
            self.alive()

    @contextlib.contextmanager
    def doing(self, what: str) -> Iterator[None]:
        """Within the block, this trainer waits for or does `what` (said if it is stuck there)."""
        self._doing.append(what)
        try:
            yield
        finally:
            self._doing.pop()
            self.alive()

    @contextlib.contextmanager
    def long(self, what: str, seconds: float) -> Iterator[None]:
        """Within the block, no progress for up to `seconds` is no hang."""
        self._long.append((time.monotonic(), seconds))
        try:
            with self.doing(what):
                yield
        finally:
            self._long.pop()

    # -- reads, from the watchdog's thread --------------------------------------------------

    @property
    def what(self) -> str | None:
        """What the loop said it does, innermost first; None where it said nothing."""
        doing = list(self._doing)
        return doing[-1] if doing else None

    def facts(self, now: float, still: float = 0.0) -> Facts:
        """The watchdog's facts at `now` (monotonic seconds); `still`: how long the main
        thread's stack has stood still."""
        longs = list(self._long)
        since, seconds = longs[-1] if longs else (None, 0.0)
        return Facts(
            now=now,
            started=self.started,
            last=self.last,
            marks=self.marks,
            times=tuple(self._times),
            long_since=since,
            long_for=seconds,
            still=still,
        )

    def rate(self) -> float | None:
        """Steps per second over the recent step marks; None before two."""
        recent = list(self._recent)
        if len(recent) < 2 or recent[-1][0] <= recent[0][0]:
            return None
        return (recent[-1][1] - recent[0][1]) / (recent[-1][0] - recent[0][0])

    def snapshot(self, now: float, waiting: str | None = None) -> Snapshot:
        """This process's progress as the progress file holds it; `waiting`: what the
        watchdog found it waits for, when it has been quiet a while."""
        what = self.what
        if self.done:
            state = DONE
        elif self._long:
            state = LONG
        elif waiting is not None or (what is not None and self.last is not None):
            state = WAITING
        elif self.last is None:
            state = STARTING
        else:
            state = TRAINING
        wall = time.time()
        last = None if self.last is None else wall - (now - self.last)
        return Snapshot(
            pid=os.getpid(),
            state=state,
            t=wall,
            step=self.step,
            marks=self.marks,
            rate=self.rate(),
            last=last,
            commit=self.commit,
            doing=what or waiting,
        )


_tracker: Tracker | None = None


def tracker() -> Tracker:
    """This process's tracker (made on first use; a forked child starts its own)."""
    global _tracker
    if _tracker is None or _tracker.pid != os.getpid():
        _tracker = Tracker()
    return _tracker


def fresh() -> Tracker:
    """A new tracker for this process: a new trainer (a second `configure`) starts from 0."""
    global _tracker
    _tracker = Tracker()
    return _tracker
