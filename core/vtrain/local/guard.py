"""The keeper's guard: a fork of vtrain between it and the keeper, that only waits.

Between vtrain and the keeper stands the keeper's guard, vtrain's own fork: it
only waits. It is a subreaper too, and gets SIGTERM when vtrain dies. Any two of
the three can die by SIGKILL together and the third stops everything:
- vtrain and the keeper (`pkill -9 -f vtrain`; a person's `kill -9` of both):
  the replicas and their orphans come back to the guard, which kills them all
  when it sees the keeper end;
- vtrain and the guard: the keeper's parent-death signal ends it, as before;
- the guard and the keeper: vtrain sees the socket end and fails the job, and
  every replica comes back to `vtrain local run`, a subreaper, whose end stops them.
Rejected: a parent-death signal per replica reaches only the replica, never its
children, and needs a step between fork and exec (posix_spawn has none); a PID
namespace whose init dies takes everything with it, but needs privileges, and
a replica's os.getpid() would no longer name it in /proc; a cgroup needs a
writable hierarchy, and still a live process to kill it once the keeper is gone.
All three die only together: no process watches from outside the job.

The keeper and the guard are titled `vtrain keeper of JOB` and `keeper's guard
of JOB` (`vtrain.local.title`): `ps` says what they are, `pkill -f "vtrain
local"` reaches vtrain alone, whose death ends the rest, and `pkill -9 -f
vtrain` reaches vtrain and the keeper, not the guard, which then stops the rest.
"""

from __future__ import annotations

# `socket` turns its constants into enums as it is imported: the C module has all we need.
import _socket
import contextlib
import errno
import gc
import os
import signal
import struct

from vtrain.local.reaper import (
    SUPPORTED,
    become_subreaper,
    set_parent_death_signal,
    stop_descendants,
)
from vtrain.local.serving import ServingFiles
from vtrain.local.title import set_title

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ENDS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
"""Signals that end the keeper and its guard: the parent-death signal, or a person's kill."""
_INT = struct.Struct("i")


def run_fork(life: Any, *args: Any) -> None:
    """Live `life(*args)` in a fork, and exit with its status: never return into vtrain's code."""
    status = 1
    try:
        status = life(*args)
    except BaseException:  # noqa: BLE001 - shown, then the process ends
        with contextlib.suppress(BaseException):
            import traceback

            traceback.print_exc()
    finally:
        os._exit(status)


def leave_vtrain(sock: _socket.socket) -> None:
    """What every fork of vtrain here does first: let go of vtrain's objects and descriptors."""
    # vtrain's objects came along with the fork: a collection could finalize one of them
    # (flush a copied buffer a second time). The keeper and its guard make little garbage.
    gc.disable()
    # Nothing of vtrain's but the socket: a copied port lock or pipe end would outlive it.
    keep = sock.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, _max_fd())
    # A group of its own, so that a signal to vtrain's group (a Ctrl-C) does not reach it;
    # not a session: a session is a scheduling group (autogroup) of its own, and starting
    # a replica from one took milliseconds instead of a tenth of one.
    os.setpgid(0, 0)


def guard_life(sock: _socket.socket, parent: int, private: str | None, job: str, keep: Any) -> int:
    """The guard's life: fork the keeper, then wait; when the keeper or vtrain ends, stop
    everything under it."""
    # The keeper and its pid first: the first replica waits for them, not for the rest.
    # The replicas' orphans come back to the keeper; to the guard only once the keeper is
    # gone, which a keeper killed in the guard's first microseconds leaves to vtrain's.
    gc.disable()
    me = os.getpid()
    try:
        keeper = os.fork()
    except OSError as e:  # vtrain sees the socket end without a pid, and this status
        return e.errno or errno.EAGAIN
    if keeper == 0:
        run_fork(keep, sock, me, private, job)
    with contextlib.suppress(OSError):  # vtrain is gone: the keeper sees it
        sock.sendall(_INT.pack(keeper))
    keeper_ended = False

    def end_keeper(signum: int, frame: object) -> None:
        # vtrain died (the parent-death signal) or a person's kill: the keeper does the
        # stopping, and removes the private folder; it sees vtrain's end on the socket too.
        if not keeper_ended:
            with contextlib.suppress(ProcessLookupError):
                os.kill(keeper, signal.SIGTERM)

    for sig in ENDS:
        signal.signal(sig, end_keeper)
    if SUPPORTED:
        set_parent_death_signal(signal.SIGTERM)
        become_subreaper()
    leave_vtrain(sock)
    # Its copy closed, the keeper's end is the socket's only one: vtrain sees the keeper end.
    sock.close()
    set_title(f"keeper's guard of {job}", "keeper's guard")
    if os.getppid() != parent:  # vtrain died before the parent-death signal was set
        end_keeper(signal.SIGTERM, None)
    while True:
        try:
            pid, _ = os.wait()  # orphans that came back to the guard are reaped on the way
        except ChildProcessError:
            break
        if pid == keeper:
            keeper_ended = True
            break
    # The keeper ended: by itself, all stopped already, or by SIGKILL, its replicas ours now.
    stop_descendants()
    if private is not None:
        ServingFiles(private).remove()
    return 0


def _max_fd() -> int:
    try:
        return max(256, os.sysconf("SC_OPEN_MAX"))
    except (OSError, ValueError):
        return 256
