"""When a trainer is stuck: a pure function of its progress and the watchdog's settings.

A trainer is stuck when it has made no progress for longer than its bound:

- before its FIRST_MARKS-th mark of progress, the first-step allowance (the framework's
  start, a first compile, the data's first batches, peers still starting);
- after, `multiple` times the median of its recent step times, and never less than
  the floor (a slow step now and then, a checkpoint the loop waits for, a busy machine);
- inside `handle.long(what, seconds)`, at least `seconds` from the block's start (an
  evaluation, a first compile the loop knows about).

A trainer that has marked no step at all past its allowance is judged only once its
main thread's stack has stood still for `still_for` seconds (a rendezvous, a connect
that never returns): a loop that marks nothing but runs (its stack moves) is work the
watchdog cannot see, not a hang.

On a platform the floor is minutes; `vtrain local run` sets the seconds that fit a
rehearsal (LOCAL). Each is read from the environment (`Settings.from_env`).
"""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence

from vtrain.errors import ConfigError
from vtrain.frozen import Frozen

WATCHDOG = "VTRAIN_WATCHDOG"
"""`on` or `off`; unset: on wherever a platform or a launcher runs the job, off alone."""
FLOOR = "VTRAIN_STUCK_FLOOR"
"""Seconds: the least time without progress that counts as stuck, once training runs."""
MULTIPLE = "VTRAIN_STUCK_MULTIPLE"
"""How many of its median step times a trainer may go without progress."""
FIRST_STEP = "VTRAIN_FIRST_STEP_SECONDS"
"""Seconds a trainer has from its start to its first steps."""
VARIABLES = (WATCHDOG, FLOOR, MULTIPLE, FIRST_STEP)

FIRST_MARKS = 3
"""Marks of progress under the first-step allowance: the first steps compile and warm up."""
RECENT = 32
"""Step times the median is taken over: the recent ones, as a run's pace changes."""

STUCK_EXIT = 75
"""The exit status of a trainer its watchdog ended (EX_TEMPFAIL: try again): the platform
restarts it, and it resumes from its last commit."""
BACKSTOP_SIGNAL = signal.SIGRTMIN + 6
"""The signal that ends a trainer stuck where its watchdog's thread cannot run (in C code that
holds the GIL): see `vtrain.progress.backstop`. A real-time one, which no framework here uses,
whose default action ends the process."""
BACKSTOP_EXIT = 128 + BACKSTOP_SIGNAL
"""The exit status where the backstop's signal cannot end the trainer (a container's PID 1
ignores a signal it has no handler for): the backstop's second timer exits with it."""
STUCK_PREFIX = "vtrain: stuck: "
"""How the watchdog's line starts: `vtrain local run` quotes it in its note of the exit."""


def stuck_said(code: int, tail: Sequence[bytes]) -> str | None:
    """What a trainer's watchdog said as it ended it (`tail`: its last lines), when `code` is
    STUCK_EXIT: ``no progress for 21 s after step 57, waiting for …``; else None."""
    if code in (-BACKSTOP_SIGNAL, BACKSTOP_EXIT):
        return "in C code that holds the GIL, past its bound; its watchdog's backstop ended it"
    if code != STUCK_EXIT:
        return None
    marker = STUCK_PREFIX.encode()
    for line in reversed(tail):
        at = line.find(marker)
        if at >= 0:
            said = line[at + len(marker) :].decode("utf-8", "replace")
            return said.split(" (bound: ", 1)[0].strip()
    return None  # an exit 75 of the script's own (EX_TEMPFAIL is not only the watchdog's)


class Settings(Frozen):
    """The watchdog's bound: a floor, a multiple of the median step time, a first-step allowance."""

    __slots__ = ("on", "floor", "multiple", "first_step")
    on: bool
    floor: float
    multiple: float
    first_step: float

    def __init__(self, on: bool, floor: float, multiple: float, first_step: float) -> None:
        self._init_from(locals())

    @classmethod
    def from_env(cls, environ: Mapping[str, str], *, launched: bool) -> Settings:
        """The settings `environ` gives; `launched`: a platform or a launcher runs the job
        (the watchdog's default is on there, off for a script run alone)."""
        switch = environ.get(WATCHDOG, "").strip().lower()
        if switch not in ("", "on", "off"):
            raise ConfigError(
                "not a switch", source=WATCHDOG, value=environ[WATCHDOG], expected="on or off"
            )
        on = launched if switch == "" else switch == "on"
        return cls(
            on=on,
            floor=_seconds(environ, FLOOR, PLATFORM.floor),
            multiple=_seconds(
                environ, MULTIPLE, PLATFORM.multiple, what="a number above 1", least=1.0
            ),
            first_step=_seconds(environ, FIRST_STEP, PLATFORM.first_step),
        )


def _seconds(
    environ: Mapping[str, str],
    name: str,
    default: float,
    *,
    what: str = "seconds, a number above 0",
    least: float = 0.0,
) -> float:
    text = environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > least or value == float("inf"):
        raise ConfigError("not a bound", source=name, value=environ[name], expected=what)
    return value


PLATFORM = Settings(on=True, floor=300.0, multiple=10.0, first_step=2400.0)
"""On a platform: 5 minutes at least; 40 minutes to the first steps, past the 30 minutes a
replica waits for late peers (vtrain.plugins.wait.DEFAULT_WAIT), whose own error says more."""
LOCAL = Settings(on=True, floor=20.0, multiple=10.0, first_step=120.0)
"""In `vtrain local run`: the examples step in 1 ms to 0.3 s, a loaded 2-core machine stalls
a replica for seconds, and a cold start takes 5 to 30 s (TensorFlow's, three replicas at
once): a frozen peer is found within 20 s, a healthy job is never taken for stuck."""


class Facts(Frozen):
    """What the watchdog knows of its trainer at `now` (monotonic seconds)."""

    __slots__ = ("now", "started", "last", "marks", "times", "long_since", "long_for", "still")
    now: float
    started: float
    """When the watch began (the replica's configure)."""
    last: float | None
    """The last mark of progress; None before the first."""
    marks: int
    times: Sequence[float]
    """Its recent step times (seconds between marks), oldest first."""
    long_since: float | None
    """Inside `handle.long(...)`: when the block began."""
    long_for: float
    """Inside `handle.long(...)`: the seconds it was given."""
    still: float
    """Seconds the main thread's stack has not moved (frames and lines alike)."""

    def __init__(
        self,
        *,
        now: float,
        started: float,
        last: float | None = None,
        marks: int = 0,
        times: Sequence[float] = (),
        long_since: float | None = None,
        long_for: float = 0.0,
        still: float = 0.0,
    ) -> None:
        self._init_from(locals())


class Stuck(Frozen):
    """The watchdog's finding: no progress for `silent` seconds, past a bound of `bound`."""

    __slots__ = ("silent", "bound", "why")
    silent: float
    bound: float
    why: str
    """How the bound was set, in a few words."""

    def __init__(self, silent: float, bound: float, why: str) -> None:
        self._init_from(locals())


def bound(facts: Facts, settings: Settings) -> tuple[float, float, str]:
    """(since, seconds, why): stuck once `seconds` pass from `since` without progress."""
    if facts.marks < FIRST_MARKS or not facts.times:
        since = facts.started if facts.last is None else facts.last
        found = (since, settings.first_step, f"first-step allowance {settings.first_step:g} s")
    else:
        median = _median(facts.times[-RECENT:])
        seconds = max(settings.floor, settings.multiple * median)
        why = (
            f"{settings.multiple:g} x its median step of {median:.3g} s"
            if seconds > settings.floor
            else f"the floor of {settings.floor:g} s (its median step is {median:.3g} s)"
        )
        assert facts.last is not None
        found = (facts.last, seconds, why)
    if facts.long_since is not None:
        since, seconds, why = found
        if facts.long_since + facts.long_for > since + seconds:
            return (facts.long_since, facts.long_for, f"handle.long(...) gave {facts.long_for:g} s")
    return found


def _median(values: Sequence[float]) -> float:
    # Not `statistics`: it loads `fractions` and `decimal` into every trainer.
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def still_for(settings: Settings) -> float:
    """Seconds a stack must stand still before a trainer that marked nothing is judged."""
    return min(10.0, settings.floor)


def past(facts: Facts, settings: Settings) -> Stuck | None:
    """The trainer's time without progress, when it is past its bound; else None."""
    since, seconds, why = bound(facts, settings)
    silent = facts.now - since
    return Stuck(silent=silent, bound=seconds, why=why) if silent > seconds else None


def stuck(facts: Facts, settings: Settings) -> Stuck | None:
    """The finding when the trainer has gone past its bound without progress, and (having
    marked nothing) stands still; else None."""
    found = past(facts, settings)
    if found is None or (facts.marks == 0 and facts.still < still_for(settings)):
        return None
    return found
