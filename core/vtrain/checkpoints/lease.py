"""One writer per checkpoint folder: a lease that names its holder, refreshed by a heartbeat.

Two processes writing one folder undo each other: a cleanup removes the other's
save in progress, retention deletes its steps. So a manager takes the folder's
lease before it first writes there (`.writer-lease.json`: pid, host, job,
replica, since when, last heartbeat), and a second writer fails at once with
one line naming the first. Readers take none.

The holder is taken over, with a warning that says why, when it is

- gone: on the same host, its pid ended (or now names a newer process, or the
  machine rebooted under the same name);
- the same replica of the same job (CLOUD_ML_JOB_ID, else TORCHELASTIC_RUN_ID;
  replica = role-index), on another host: a platform restarts a replica only
  once the old one is dead (a restart on the same host is checked as above);
- silent: no heartbeat for STALE_AFTER seconds, on another host.

Every process holds one lease per folder, shared by its managers, refreshed every
HEARTBEAT_EVERY seconds by one daemon thread, and given back when its last
manager goes (or at exit). A holder that finds its lease taken over (it was
frozen past STALE_AFTER, say) refuses its next save, naming the holder it found.

The lease is read, judged and written through the folder's compare-and-set
(`vtrain.storage.cas`): written only at the version that was read, so of two
processes that race for it one wins and the other looks again. On a mounted folder
(a local disk, /gcs/) that is flock and a rename; on gs://, an object written at the
generation read. (Two machines that take a stale lease on /gcs/ in the same instant
may both write it: the one overwritten finds out at its next heartbeat and refuses
its next save.)
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from vtrain.errors import CheckpointError, StorageError
from vtrain.log import logger
from vtrain.storage.location import Location
from vtrain.storage.owner import Owner, me, running

LEASE = ".writer-lease.json"
HEARTBEAT_EVERY = 15.0
"""Seconds between two refreshes of a held lease."""
STALE_AFTER = 120.0
"""Seconds without a heartbeat after which a holder on another host counts as gone: eight
missed heartbeats, and more than the clocks of two machines of one job differ."""
JOB_VARIABLES = ("CLOUD_ML_JOB_ID", "TORCHELASTIC_RUN_ID")
_RACES = 3  # a lease read, judged and written again when another process wrote first
log = logger(__name__)


@dataclass(frozen=True)
class Holder:
    """What a lease says about the process that holds it."""

    owner: Owner
    job: str | None
    replica: str | None
    since: float
    heartbeat: float
    token: str

    def to_bytes(self) -> bytes:
        o = self.owner
        record = {
            "pid": o.pid,
            "host": o.host,
            "start": o.start,
            "boot": o.boot,
            "job": self.job,
            "replica": self.replica,
            "since": self.since,
            "heartbeat": self.heartbeat,
            "token": self.token,
        }
        return json.dumps(record, indent=1).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> Holder | None:
        """The holder a lease names; None for a lease that cannot be read (it is taken over)."""
        try:
            r = json.loads(data)
            pid, host, start, boot, token = (
                r["pid"],
                r["host"],
                r.get("start"),
                r.get("boot"),
                r["token"],
            )
            since, heartbeat = float(r["since"]), float(r["heartbeat"])
            job, replica = r.get("job"), r.get("replica")
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError):
            return None
        # A pid of 0 or below names a process group to os.kill, never one process.
        if not (type(pid) is int and pid > 0 and isinstance(host, str) and isinstance(token, str)):
            return None
        if not (start is None or type(start) is int) or not (boot is None or isinstance(boot, str)):
            return None
        if not all(v is None or isinstance(v, str) for v in (job, replica)):
            return None
        if not (math.isfinite(since) and math.isfinite(heartbeat)):
            return None
        return cls(Owner(pid, host, start, boot), job, replica, since, heartbeat, token)

    def describe(self, now: float | None = None) -> str:
        """Who holds it, how long, when last heard: ``pid 12 on host-a (job J, chief-0), since
        2025-01-02 03:04:05 UTC, last seen 3 s ago``."""
        now = time.time() if now is None else now
        who = ", ".join(p for p in (self.job and f"job {self.job}", self.replica) if p)
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.since))
        seen = max(0.0, now - self.heartbeat)
        return (
            f"{self.owner}{f' ({who})' if who else ''}, since {since}, last seen {seen:.0f} s ago"
        )

    def same_process(self, other: Holder) -> bool:
        return self.token == other.token or self.owner == other.owner


@dataclass(frozen=True)
class Loss:
    """What a heartbeat found in place of this process's lease."""

    holder: Holder | None
    """The process that took it over, as that heartbeat read it; None for a lease that cannot
    be read (not this process's either: its own are replaced whole, never half-written)."""

    def describe(self) -> str:
        if self.holder is None:
            return f"its lease ({LEASE}) was rewritten with something that cannot be read"
        return self.holder.describe()


def identity(environ: Mapping[str, str], role: str, index: int) -> tuple[str | None, str]:
    """(job, replica) of this process, as a lease records them."""
    job = next((environ[v] for v in JOB_VARIABLES if environ.get(v)), None)
    return job, f"{role}-{index}"


def _takeover(current: Holder | None, mine: Holder, uri: str, now: float) -> str | None:
    """None when the lease is free or ours; the reason when it may be taken over; else raise."""
    if current is None or current.same_process(mine):
        return None
    alive = running(current.owner)
    if alive is False:
        return "that process is gone"
    if alive is None:
        if mine.job is not None and (current.job, current.replica) == (mine.job, mine.replica):
            return f"this is a restart of {mine.replica} of job {mine.job}"
        if now - current.heartbeat > STALE_AFTER:
            return f"no heartbeat for more than {STALE_AFTER:g} s"
    raise CheckpointError(
        f"another process writes this checkpoint folder: {current.describe(now)}",
        source=uri,
        hint="one writer per folder: give this run a folder of its own (VTRAIN_OUTPUT_DIR, "
        "--output-dir, or the manager's directory), or stop the other one; its lease "
        f"({LEASE}) is taken over once that process is gone, or {STALE_AFTER:g} s after "
        "its last heartbeat",
    )


def _note(uri: str, current: Holder, why: str, now: float) -> None:
    log.warning(
        f"vtrain: {uri}: took over the checkpoint folder's lease from {current.describe(now)}: "
        f"{why}"
    )


class Lease:
    """This process's hold on one checkpoint folder."""

    def __init__(self, location: Location, job: str | None, replica: str | None) -> None:
        self.uri = location.uri
        now = time.time()
        self.holder = Holder(me(), job, replica, now, now, os.urandom(8).hex())
        self.lost: Loss | None = None
        """Who took this lease over, as the heartbeat that found it gone saw them."""
        self._location = location
        self._cas = location.cas(LEASE)
        self.users = 0

    def take(self) -> None:
        """Hold the folder, or raise `CheckpointError` naming the process that does."""
        with _storage_errors("take the writer's lease", self.uri):
            self._location.makedirs()
            for _ in range(_RACES):
                current, there, token = self._read()
                self._judge(current, there)
                if self._cas.put(self._fresh().to_bytes(), token):
                    return
        raise CheckpointError(
            "other processes keep taking this checkpoint folder's lease",
            source=self.uri,
            hint="one writer per folder: stop the others",
        )

    def _read(self) -> tuple[Holder | None, bool, object]:
        """(the holder, whether a lease is there at all, the token of what was read)."""
        data, token = self._cas.get()
        return (None if data is None else Holder.from_bytes(data)), data is not None, token

    def _judge(self, current: Holder | None, there: bool) -> None:
        now = time.time()
        why = _takeover(current, self.holder, self.uri, now)
        if current is not None and why is not None:
            _note(self.uri, current, why, now)
        elif current is None and there:
            log.warning(
                f"vtrain: {self.uri}: took over a checkpoint folder's lease that cannot be read "
                f"({LEASE})"
            )

    def _fresh(self) -> Holder:
        h = self.holder
        self.holder = Holder(h.owner, h.job, h.replica, h.since, time.time(), h.token)
        return self.holder

    def refresh(self) -> None:
        """Renew the heartbeat; a lease that is not this process's any more is marked `lost`.

        Read, compare and write are one step (a compare-and-set at the version that was
        read), so a heartbeat never writes over another's lease. A deleted folder is not
        made again: there is nothing to hold."""
        if self.lost is not None:
            return
        current, there, token = self._read()
        if there and (current is None or current.token != self.holder.token):
            self.lost = Loss(current)
            return
        self._cas.put(self._fresh().to_bytes(), token)  # lost a race: the next heartbeat looks

    def check(self) -> None:
        """Raise `CheckpointError` if another process took this lease over."""
        if self.lost is None:
            return
        raise CheckpointError(
            f"another process took over this checkpoint folder: {self.lost.describe()}",
            source=self.uri,
            hint=f"this process went {STALE_AFTER:g} s without a heartbeat, or was taken for "
            "a restart of itself; one writer per folder: stop one of them",
        )

    def give_back(self) -> None:
        """Remove the lease if it is still this process's."""
        if self.lost is not None or self.holder.owner.pid != os.getpid():
            return  # a forked child never gives back its parent's lease
        with contextlib.suppress(Exception):  # at exit, or a folder already deleted
            current, _, token = self._read()
            if current is not None and current.token == self.holder.token:
                self._cas.put(None, token)


@contextlib.contextmanager
def _storage_errors(operation: str, uri: str) -> Iterator[None]:
    try:
        yield
    except CheckpointError:
        raise
    except Exception as e:  # noqa: BLE001 - an OSError, or the storage client's own errors
        # A location's StorageError names its own operation: the OSError under it says why.
        why = e.__cause__ if isinstance(e, StorageError) and e.__cause__ is not None else e
        raise CheckpointError(
            f"cannot {operation}: {getattr(why, 'strerror', None) or why}",
            source=uri,
            hint="check that the folder exists and this user may write there",
        ) from e


# -- this process's leases, and the one thread that keeps them ----------------------------

_held: dict[str, Lease] = {}
_lock = threading.Lock()
_dropped: list[Lease] = []  # a user of each went away; counted under the lock, given back after
_beating: list[int] = []  # the pid whose heartbeat thread runs: a forked child starts its own


def hold(location: Location, user: object, job: str | None, replica: str | None) -> Lease:
    """This process's lease on `location`, taken if it is not held yet; given back once every
    `user` that asked for it is gone."""
    pid = os.getpid()
    with _lock:
        doomed = _count_dropped()
    _give_back(doomed)
    with _lock:
        lease = _held.get(location.uri)
        if lease is not None and lease.holder.owner.pid != pid:
            _held.clear()  # inherited through a fork: the parent's, not ours
            lease = None
        if lease is None or lease.lost is not None:
            lease = Lease(location, job, replica)
            lease.take()
            _held[location.uri] = lease
        lease.users += 1
        if _beating != [pid]:
            _beating[:] = [pid]
            threading.Thread(target=_beat, name="vtrain-lease-heartbeat", daemon=True).start()
    weakref.finalize(user, _release, lease)
    return lease


def _release(lease: Lease) -> None:
    # A finalizer: it may run in the middle of `hold`, on the thread that holds the lock
    # (a garbage collection). So it only queues, and counts when the lock is free.
    _dropped.append(lease)
    if not _lock.acquire(blocking=False):
        return  # the holder of the lock counts it
    try:
        doomed = _count_dropped()
    finally:
        _lock.release()
    _give_back(doomed)


def _count_dropped() -> list[Lease]:
    """Count the queued departures (under the lock); the leases no one uses any more."""
    doomed = []
    while _dropped:
        lease = _dropped.pop()
        lease.users -= 1
        if lease.users <= 0 and _held.get(lease.uri) is lease:
            del _held[lease.uri]
            doomed.append(lease)
    return doomed


def _give_back(leases: list[Lease]) -> None:
    for lease in leases:
        lease.give_back()


def beat() -> None:
    """One heartbeat: refresh every lease this process holds; give back those no one uses."""
    with _lock:
        doomed = _count_dropped()
        leases = list(_held.values())
    _give_back(doomed)
    for lease in leases:
        with contextlib.suppress(Exception):  # a network blip: the next beat tries again
            lease.refresh()


def _beat() -> None:
    pid = os.getpid()
    while _beating == [pid]:
        time.sleep(HEARTBEAT_EVERY)
        beat()
