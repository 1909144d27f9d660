"""Goodput: the share of a job's wall-clock time that trained, and where the rest went (pure).

From a job's timeline (`vtrain.timeline.reader.Job`), per replica and for the job:

- wall: from the job's first launch (or process start) to its end;
- productive: time in steps that count: each attempt's steps, from its first step's
  start to its last step's end, less the commits that held the loop and the steps
  it trained again;
- start-up: process start to the framework set up (the cluster read, the collective
  joined), in the first attempt;
- waiting: from set-up to the first step's start (peers, the model and data, the
  resume), in the first attempt;
- checkpoints: time commits held the loop (a background commit holds it only while
  its payload is taken);
- lost to failures: from each failure (the end of an attempt's last step) to the first
  step's start of the attempt after it: the notice, the restart, its start-up, its resume;
- redone: the steps an attempt trained again (the furthest step reached before,
  less the step it resumed from), at the replica's median step time;
- other: the rest (the model's save after the last step, the end of the job).

The job's figures are its leader's (chief-0, else the first replica that trained):
the replicas of a synchronous job train in step. A step's start is its end less the
median step time.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from vtrain.timeline.events import (
    COMMIT,
    FIRST_STEP,
    JOB_END,
    LAUNCH,
    PREEMPT_COMMIT,
    READY,
    RESUME,
    START,
    STEP,
)

Records = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Breakdown:
    """Where one replica's (or the job's) wall-clock time went, in seconds."""

    wall: float
    productive: float
    startup: float
    waiting: float
    checkpoints: float
    lost: float
    redone: float
    other: float

    @property
    def goodput(self) -> float:
        """Productive time over wall-clock time (0 for a job of no time)."""
        return self.productive / self.wall if self.wall > 0 else 0.0

    def shares(self) -> dict[str, float]:
        """Each part's share of the wall-clock time."""
        return {
            f.name: getattr(self, f.name) / self.wall if self.wall > 0 else 0.0
            for f in fields(self)
        }


@dataclass(frozen=True)
class Goodput:
    """A job's goodput: its leader's breakdown, and every replica's that trained."""

    job: Breakdown
    leader: str
    replicas: Mapping[str, Breakdown]

    def line(self) -> str:
        """One line: the figure and its largest losses."""
        job = self.job
        parts = [
            ("start-up", job.startup),
            ("waiting", job.waiting),
            ("checkpoints", job.checkpoints),
            ("lost to failures", job.lost),
            ("redone steps", job.redone),
            ("other", job.other),
        ]
        shown = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in parts if seconds >= 0.05)
        return f"goodput {job.goodput:.0%}: {job.productive:.1f} s of {job.wall:.1f} s trained" + (
            f"; {shown}" if shown else ""
        )


def goodput(lanes: Mapping[tuple[str, int], Records], launcher: Records = ()) -> Goodput | None:
    """The goodput of a job whose trainers wrote `lanes` ((replica, attempt) -> records) and
    whose launcher wrote `launcher`; None when no replica trained a step."""
    begin = min(
        (r["t"] for rs in (*lanes.values(), launcher) for r in rs if r["e"] in (START, LAUNCH)),
        default=None,
    )
    end = max((r["t"] for rs in (*lanes.values(), launcher) for r in rs), default=None)
    ended = [r["t"] for r in launcher if r["e"] == JOB_END]
    if ended:
        end = ended[-1]
    if begin is None or end is None:
        return None
    replicas: dict[str, Breakdown] = {}
    for replica in dict.fromkeys(name for name, _ in lanes):
        attempts = [rs for (name, _), rs in sorted(lanes.items()) if name == replica]
        found = _replica(attempts, begin, end)
        if found is not None:
            replicas[replica] = found
    if not replicas:
        return None
    leader = "chief-0" if "chief-0" in replicas else next(iter(replicas))
    return Goodput(replicas[leader], leader, replicas)


def _steps(records: Records) -> list[tuple[float, int]]:
    return [
        (r["t"], int(r["step"])) for r in records if r["e"] in (FIRST_STEP, STEP) and "step" in r
    ]


def step_time(attempts: Sequence[Records]) -> float:
    """The median seconds a step takes, from the step records (0 where they cannot say)."""
    rates = []
    for records in attempts:
        steps = sorted(_steps(records))
        for (t0, s0), (t1, s1) in zip(steps, steps[1:], strict=False):
            if s1 > s0 and t1 > t0:
                rates.append((t1 - t0) / (s1 - s0))
    return statistics.median(rates) if rates else 0.0


def _first(records: Records, event: str) -> float | None:
    return next((r["t"] for r in records if r["e"] == event), None)


def _replica(attempts: Sequence[Records], begin: float, end: float) -> Breakdown | None:
    """One replica's breakdown over its attempts (in order); None if it never stepped."""
    per_step = step_time(attempts)
    productive = startup = waiting = checkpoints = lost = redone = 0.0
    reached = 0  # the furthest step an earlier attempt reached
    failed_at: float | None = None  # when the failure the next first step ends began
    stepped = False
    for i, records in enumerate(attempts):
        steps = _steps(records)
        started = _first(records, START) or begin
        if steps:
            first = min(t for t, _ in steps) - per_step  # the first step's start
            if not stepped and failed_at is None:  # the first start: start-up, then the wait
                ready = _first(records, READY) or first
                startup += max(0.0, ready - begin)
                waiting += max(0.0, first - ready)
            elif failed_at is not None:
                lost += max(0.0, first - failed_at)
            span = max(0.0, max(t for t, _ in steps) - first)
            held = sum(
                float(r.get("held", 0.0)) for r in records if r["e"] in (COMMIT, PREEMPT_COMMIT)
            )
            resumed = next((int(r["step"]) for r in records if r["e"] == RESUME), 0)
            top = max(s for _, s in steps)
            again = min(span, max(0, min(reached, top) - resumed) * per_step)
            productive += max(0.0, span - held - again)
            checkpoints += held
            redone += again
            reached, stepped, failed_at = max(reached, top), True, None
        if i + 1 < len(attempts) and failed_at is None:  # another attempt follows this one
            # Its progress ended with its last step: what follows until the next attempt's
            # first step is lost to the failure (the failure's notice, the exit, the restart).
            failed_at = max(t for t, _ in steps) if steps else started
    if not stepped:
        return None
    wall = max(0.0, end - begin)
    other = max(0.0, wall - productive - startup - waiting - checkpoints - lost - redone)
    return Breakdown(wall, productive, startup, waiting, checkpoints, lost, redone, other)
