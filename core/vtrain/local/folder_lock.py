"""One job per output folder: a lock held for the job's life, naming the job that holds it.

Two jobs in one folder destroy each other: the second swaps the first's live
disks for fresh ones and writes its logs over the first's. So a job takes
`LOCK_FILE` in its folder (a trial's folder; `vtrain tune`, its study's) with
`flock` before it touches anything there, and a second job stops at once, in one
line naming the first (its job id, pid and start). The kernel drops a flock when
the last descriptor of its holder closes, so a job that died, even by SIGKILL,
holds nothing: its lock is taken over, and the takeover says whose it was. The
descriptor is close-on-exec and the keeper closes every descriptor it inherits
(`vtrain.local.keeper`), so no replica or child keeps a lock alive after its job.

The file's body, {pid, start, started, what, job_id}, is for the message alone;
`start` is the process's start in clock ticks since boot (/proc/PID/stat), so
that a pid the system gave to another process since is not taken for the job.
The file is never removed: a lock file unlinked and made again would let two
jobs each hold a lock of their own.
"""

from __future__ import annotations

import contextlib
import json
import os
import time

from vtrain.errors import LaunchError
from vtrain.log import logger
from vtrain.process_start import start_time

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType
    from typing import Any

LOCK_FILE = ".vtrain.lock"
"""The lock's file in the folder it guards."""

KINDS = ("job", "study")
"""What holds a folder: a job (`vtrain local run`), or a study (`vtrain tune`)."""

LIVE, GONE, REUSED, UNKNOWN = "live", "gone", "reused", "unknown"
"""What a lock file's pid names now: its job, no process, another process, or cannot tell."""


def holder(body: str) -> dict[str, Any] | None:
    """The job a lock file's `body` names: {pid, start, started, what, job_id}; None when it
    names none (an empty file: a lock released, or being written; garbage)."""
    try:
        found = json.loads(body)
    except ValueError:
        return None
    if not isinstance(found, dict) or type(found.get("pid")) is not int or found["pid"] <= 0:
        return None
    return found


def fate(named: dict[str, Any], start_of: Callable[[int], int | None]) -> str:
    """What the process a lock names is now: LIVE, GONE, REUSED (its pid names another
    process, started at another moment) or UNKNOWN (the lock recorded no start)."""
    now = start_of(named["pid"])
    if now is None:
        return GONE
    start = named.get("start")
    if type(start) is not int:
        return UNKNOWN
    return LIVE if start == now else REUSED


def who(named: dict[str, Any] | None) -> str:
    """`job J (pid P, started T)`, as far as the lock says it."""
    if named is None:
        return "a job that has not said who it is yet"
    job, what = named.get("job_id"), named.get("what")
    started = named.get("started")
    when = f", started {started}" if isinstance(started, str) else ""
    kind = what if what in KINDS else "job"
    name = f"{kind} {job}" if isinstance(job, str) else f"a {kind}"
    return f"{name} (pid {named['pid']}{when})"


def takeover_line(folder: str, named: dict[str, Any] | None, now: str) -> str | None:
    """The line that says whose lock a job took over, its process being `now` (what `fate`
    says): None when nobody held it."""
    if named is None:
        return None
    if now == GONE:
        why = "that process has ended"
    elif now == REUSED:
        why = f"it has ended; pid {named['pid']} is another process now"
    else:
        why = "it no longer holds it"
    return f"vtrain: took over the lock of {folder} from {who(named)}: {why}"


class FolderLock:
    """A job's hold on its folder, from `take` to `release` (or the process's end)."""

    def __init__(self, fd: int, folder: str, source: str) -> None:
        self._fd: int | None = fd
        self.folder = folder
        self.source = source

    @classmethod
    def take(
        cls, folder: str, job_id: str, *, what: str = "job", source: str = "--output-dir"
    ) -> FolderLock:
        """Hold `folder` (made when missing) for `what` (one of KINDS) `job_id`; LaunchError
        when another holds it, OSError when the folder cannot be made or its lock opened."""
        import fcntl

        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, LOCK_FILE)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise _held(folder, source, holder(_read(fd))) from None
            named = holder(_read(fd))
            now = UNKNOWN if named is None else fate(named, start_time)
            me = now == LIVE and named is not None and named["pid"] == os.getpid()
            if now == LIVE and not me:
                # Its job runs, yet holds no flock: its lock file was replaced under it.
                raise _held(folder, source, named)
            if not me and (line := takeover_line(folder, named, now)) is not None:
                logger(__name__).warning(line)
            _write(fd, _body(what, job_id))
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, folder, source)

    def release(self) -> None:
        """Let go of the folder; the file is left, empty (a lock nobody holds)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        # A full or read-only disk: the flock goes with the descriptor all the same.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _held(folder: str, source: str, named: dict[str, Any] | None) -> LaunchError:
    return LaunchError(
        f"{who(named)} is running in this folder",
        source=source,
        value=folder,
        expected="a folder no other job is using",
        hint=f"wait for it to end, or give this job another {source}",
    )


def _body(what: str, job_id: str) -> str:
    pid = os.getpid()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    body = {"pid": pid, "start": start_time(pid), "started": started}
    return json.dumps({**body, "what": what, "job_id": job_id})


def _read(fd: int) -> str:
    # A lock file holds a few dozen bytes; a larger one is garbage, read no further.
    return os.pread(fd, 4096, 0).decode("utf-8", "replace")


def _write(fd: int, text: str) -> None:
    data = text.encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
