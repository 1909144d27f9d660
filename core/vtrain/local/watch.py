"""What each run of each replica wrote and opened, whatever did it: the verdict's eyes on files.

The leader, local-disk and resume checks ask who wrote a file and who opened it.
Python's audit hook answers for Python's own `open`; `torch.save`, `np.save`,
TensorFlow's writers, `os.replace` and a subprocess's `echo > file` go around it.
So the rehearsal asks the kernel: fanotify (`vtrain.local.fanotify`) reports
every read, write and rename on the filesystems the job touches with the pid
that made it, and the process connector (`vtrain.local.forks`) says whose child
that pid was, even once it is gone. A pid that descends from a run's replica
process is that run's; the rest of the machine is ignored.

Chosen over the alternatives because it changes nothing the replica sees: a
mount namespace or per-replica views of the shared folders would change paths,
and `rename` across mounts fails (EXDEV) where on the platform it works; inotify
names no process. The cost falls on vtrain's thread, not on the training loop:
a notification event is queued by the kernel as the call returns.

Where the kernel refuses (not root, not Linux), `Watcher.start` returns the
reason, and the verdict says what was not checked.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import threading

from vtrain.local.evidence import Run
from vtrain.local.fanotify import MOVED_IN, READ, WRITTEN, Fanotify
from vtrain.local.forks import Forks, ancestor

NOT_SEEN = (
    "writes by native code (torch.save, np.save), renames and subprocesses, and files a "
    "replica read from another's machine"
)
"""What the verdict cannot check without the watcher."""
_STOP_SECONDS = 10.0
_BATCH_SECONDS = 0.05
# What an interpreter and its packages open by the thousand: never the job's files.
_RUNTIME = tuple(
    dict.fromkeys(os.path.join(p, "") for p in (sys.prefix, sys.base_prefix, "/usr/lib", "/etc"))
)


class Watcher:
    """A thread reading the kernel's file events into the runs that caused them."""

    def __init__(self, fan: Fanotify, forks: Forks, keeper: int) -> None:
        self._fan = fan
        self._forks = forks
        self._keeper = keeper
        self._runs: dict[int, Run] = {}
        self._pending: list[tuple[int, str, str]] = []  # (pid, kind, path) of unknown runs
        self._seen: dict[int, set[tuple[str, str]]] = {}
        self._folders: dict[bytes, str | None] = {}  # a folder's handle -> its path (None: not
        # the job's); a folder renamed later keeps the name it had when first seen
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._loop, name="vtrain-watch", daemon=True)

    @classmethod
    def start(cls, paths: list[str], keeper: int) -> Watcher | str:
        """Watch the filesystems of `paths` for the descendants of the keeper `keeper`; or why
        this machine does not let us."""
        forks = Forks.open()
        if forks is None:
            return "the kernel's process events are refused here (they need root)"
        fan = Fanotify.open(paths)
        if isinstance(fan, str):
            forks.close()
            return fan
        watcher = cls(fan, forks, keeper)
        watcher._thread.start()
        return watcher

    def started(self, pid: int, run: Run) -> None:
        """`run`'s replica process is `pid`: what it and its descendants do is the run's."""
        with self._lock:
            self._runs[pid] = run
            pending, self._pending = self._pending, []
            for owner, kind, path in pending:
                self._note(owner, kind, path)  # this run's now; the others' wait again

    def stop(self) -> list[str]:
        """Read what is queued, end the thread; what may have been missed, for ``not checked``."""
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        self._thread.join(_STOP_SECONDS)
        missed = []
        if self._thread.is_alive():
            missed.append(f"files seen after {_STOP_SECONDS:g} s of the watcher's reading")
        if self._fan.lost or self._forks.lost:
            missed.append("some file events: the kernel's queue overflowed")
        self._fan.close()
        self._forks.close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        return missed

    def _loop(self) -> None:
        poll = select.poll()
        poll.register(self._fan.fileno(), select.POLLIN)
        poll.register(self._wake_r, select.POLLIN)
        stop = select.poll()
        stop.register(self._wake_r, select.POLLIN)
        while True:
            ready = {fd for fd, _ in poll.poll()}
            # Events wait in the kernel's queue at no cost to the replicas: read them in
            # batches. One wake-up per event cost vtrain 60 µs each (3,000 to import TF).
            # The pause ends at once when the job does: its teardown waits for no batch.
            if self._wake_r not in ready and not stop.poll(_BATCH_SECONDS * 1000):
                self._drain()
                continue
            # Events of the last runs' last moments are queued already: read them all.
            os.set_blocking(self._fan.fileno(), False)
            while self._drain():
                pass
            return

    def _drain(self) -> bool:
        """Handle one read's events; False when there were none."""
        events = self._fan.read()
        if not events:
            return False
        # A pid in an event was forked before it: its fork is in the connector's queue now.
        self._forks.update()
        with self._lock:
            wanted = self._runs.keys() | {self._keeper}
            owners: dict[int, int | None] = {}
            for mask, pid, fsid, handle, name in events:
                # The folder first: most events are an interpreter reading its own files.
                key = fsid + handle
                folder = self._folders.get(key, "")
                if folder == "":
                    folder = self._folders[key] = _kept(self._fan.folder(fsid, handle))
                if folder is None:
                    continue
                owner = owners.get(pid, -1)
                if owner == -1:
                    owner = owners[pid] = self._owner(pid, wanted)
                if owner is None:
                    continue
                path = os.path.join(folder, os.fsdecode(name))
                if mask & (WRITTEN | MOVED_IN):
                    self._note(owner, "write", path)
                if mask & READ:
                    self._note(owner, "read", path)
        return True

    def _owner(self, pid: int, wanted: set[int]) -> int | None:
        """The replica process `pid` is or descends from; None: not a run's."""
        owner = ancestor(self._forks.parent, pid, wanted)
        if owner == self._keeper:  # a run not heard of yet: the keeper's child
            return None if pid == self._keeper else self._below_keeper(pid)
        return owner

    def _below_keeper(self, pid: int) -> int | None:
        """The keeper's child that `pid` descends from: a replica process."""
        for _ in range(64):
            parent = self._forks.parent(pid)
            if parent is None or parent == self._keeper:
                return None if parent is None else pid
            pid = parent
        return None

    def _note(self, owner: int, kind: str, path: str) -> None:
        run = self._runs.get(owner)
        if run is None:  # a replica the keeper started, whose pid vtrain has not heard yet
            self._pending.append((owner, kind, path))
            return
        seen = self._seen.setdefault(owner, set())
        if (kind, path) not in seen:
            seen.add((kind, path))
            run.seen.append((kind, path))


def _kept(folder: str | None) -> str | None:
    """`folder`, unless it is gone or is an interpreter's own (its packages, its caches)."""
    if folder is None or folder.startswith(_RUNTIME) or folder.endswith("__pycache__"):
        return None
    return folder
