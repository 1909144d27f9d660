"""A job's timeline: what each process and `vtrain local run` record, and where (pure).

One JSON object a line, each with its wall-clock time `t` (seconds) and its event `e`.
A trainer's file is one replica's attempt, `<replica>.<attempt>.jsonl`;
`vtrain local run` adds `launcher.jsonl`, what only it sees. Every line is whole
or absent: a process killed mid-write loses at most its last line, which `parse`
skips.
"""

from __future__ import annotations

import re

from vtrain import json_lines

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

# A trainer's events.
START = "start"
"""The process started (`t` from the kernel's own start time)."""
READY = "ready"
"""The framework's set-up is done: the cluster read, the collective joined."""
FIRST_STEP = "first_step"
STEP = "step"
"""The step reached (`step`), at most once a second."""
COMMIT = "commit"
"""A checkpoint's save (`step`): `held` seconds the loop waited for it."""
COMMITTED = "committed"
"""The leader's commit of `step` ended: `seconds` it took, `background` whether the loop went on."""
SIGTERM = "sigterm"
PREEMPT_COMMIT = "preempt_commit"
RESUME = "resume"
"""The trainer resumed from the commit of `step`."""
EXIT = "exit"
# What only `vtrain local run` sees.
LAUNCH = "launch"
"""A replica's process started (`replica`, `attempt`, `pid`)."""
ENDED = "ended"
"""A replica's process ended (`replica`, `attempt`, `status`: its exit code, or -signal)."""
KILL = "kill"
"""A fault was injected (`replica`, `signal`)."""
RESTART = "restart"
"""Replicas restart (`replicas`, `whole_job`, `why`)."""
JOB_END = "job_end"
"""The job ended (`outcome`, `status`)."""

LAUNCHER_FILE = "launcher.jsonl"
FOLDER = "timeline"
_FILE = re.compile(r"(?P<replica>[a-z]+-\d+)\.(?P<attempt>\d{1,6})\.jsonl")


def line(record: Mapping[str, Any]) -> bytes:
    """One record as its line."""
    return json_lines.line(record, allow_nan=False)


def parse(lines: Iterable[bytes]) -> list[dict[str, Any]]:
    """The records of `lines`; a torn line (its writer killed mid-write) is skipped."""
    return json_lines.parse(lines, lambda r: isinstance(r.get("t"), (int, float)) and "e" in r)


def replica_file(replica: str, attempt: int) -> str:
    """The file of `replica`'s attempt `attempt` (1 for its first process)."""
    return f"{replica}.{attempt}.jsonl"


def lanes(names: Iterable[str]) -> list[tuple[str, int]]:
    """The (replica, attempt) of each trainer's file among `names`, in order."""
    found = [(m["replica"], int(m["attempt"])) for n in names if (m := _FILE.fullmatch(n))]
    return sorted(found, key=lambda lane: (_order(lane[0]), lane[1]))


def next_attempt(names: Iterable[str], replica: str) -> int:
    """The attempt a new process of `replica` is, given the folder's listing `names`."""
    return max((a for r, a in lanes(names) if r == replica), default=0) + 1


def folder_of(checkpoint_dir: str) -> str:
    """Where a job's timeline goes on a platform: beside its checkpoints' folder (a path, /gcs/
    or gs://), in `timeline/`."""
    trimmed = checkpoint_dir.rstrip("/")
    parent = trimmed.rpartition("/")[0] or "."
    return f"{parent}/{FOLDER}"


def _order(replica: str) -> tuple[int, str, int]:
    role, _, index = replica.rpartition("-")
    rank = (
        ("chief", "master", "worker", "ps", "evaluator").index(role)
        if role in ("chief", "master", "worker", "ps", "evaluator")
        else 9
    )
    return rank, role, int(index) if index.isdigit() else 0
