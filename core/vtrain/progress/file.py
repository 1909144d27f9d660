"""The progress file: one trainer's progress as one JSON object, for readers outside the process.

`vtrain local run` names a file per replica (VTRAIN_PROGRESS_FILE); the trainer's
watchdog thread rewrites it in place, at most once a second, padded to a fixed size
so that one `pwrite` replaces it whole. A reader that meets a half-written object
(a write is not atomic against a read) gets None and keeps what it read before.
"""

from __future__ import annotations

import json
import os

from vtrain.frozen import Frozen

SIZE = 512
"""Bytes of every write: the object, padded with spaces (a longer `doing` is cut)."""
_DOING_MOST = 160

# States a trainer reports; the live view adds those only vtrain knows (restarting, frozen).
STARTING, TRAINING, WAITING, LONG, STUCK, DONE = (
    "starting",
    "training",
    "waiting",
    "long",
    "stuck",
    "done",
)


class Snapshot(Frozen):
    """One trainer's progress at time `t` (Unix seconds)."""

    __slots__ = ("pid", "state", "step", "marks", "rate", "last", "commit", "doing", "t")
    pid: int
    state: str
    step: int | None
    """The step it reached, where the loop counts steps (None: it only marks progress)."""
    marks: int
    """How many times it made progress (steps, batches, commits)."""
    rate: float | None
    """Steps (or marks) per second over its recent progress; None before two."""
    last: float | None
    """When it last made progress (Unix seconds); None before the first."""
    commit: int | None
    """The last step it committed (the leader's save), or None."""
    doing: str | None
    """What it waits for or does, where that is known (a collective, an evaluation)."""
    t: float

    def __init__(
        self,
        *,
        pid: int,
        state: str,
        t: float,
        step: int | None = None,
        marks: int = 0,
        rate: float | None = None,
        last: float | None = None,
        commit: int | None = None,
        doing: str | None = None,
    ) -> None:
        self._init_from(locals())

    def encode(self) -> bytes:
        """The object as the file holds it: SIZE bytes, JSON padded with spaces."""
        fields = self._fields()
        doing = fields["doing"]
        if doing is not None and len(doing) > _DOING_MOST:
            fields["doing"] = doing[: _DOING_MOST - 1] + "…"
        data = json.dumps(fields, separators=(",", ":"), ensure_ascii=True).encode()
        return data.ljust(SIZE)[:SIZE]


def decode(data: bytes) -> Snapshot | None:
    """The snapshot `data` holds; None for a torn, empty or foreign object."""
    try:
        fields = json.loads(data.decode("ascii"))
        return Snapshot(**fields) if isinstance(fields, dict) else None
    except (ValueError, TypeError):
        return None


def read(path: str) -> Snapshot | None:
    """The snapshot in file `path`; None when there is none yet (or it is being written)."""
    try:
        with open(path, "rb") as f:
            return decode(f.read(SIZE))
    except OSError:
        return None


class Writer:
    """Rewrites one progress file in place (opened once, private to the user)."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def write(self, snapshot: Snapshot) -> None:
        """Replace the file's object with `snapshot`'s."""
        os.pwrite(self._fd, snapshot.encode(), 0)

    def close(self) -> None:
        """Close the file (it stays, for the last reader)."""
        os.close(self._fd)
