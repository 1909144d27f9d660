"""Nothing a job starts outlives it: subreapers, the parent-death signal, a sweep of descendants.

vtrain (`local run`, `tune`) makes itself a child subreaper, so that a process
a replica started and orphaned -- a daemon that forked twice and called
setsid() -- comes back to vtrain instead of init, and the sweep at the job's
end stops it. `vtrain local run` starts its replicas through one keeper per
job (`vtrain.local.keeper`), built from the same calls. A trial of `vtrain
tune` runs under a guard: this file, run as a script (standard library only,
so it starts in milliseconds; one per trial, whose own replicas have a keeper).
The guard is also a subreaper, gets SIGTERM when vtrain dies
(PR_SET_PDEATHSIG: `kill -9 vtrain`), and then kills everything under it; when
its command ends it kills what the command left, and exits as the command did.

    python -I -S reaper.py PARENT_PID STATUS_FD -- COMMAND...

`spawn` starts a command so; STATUS_FD tells it whether the command could start.

On systems other than Linux there is no subreaper and no parent-death signal:
commands run without a guard, and the process groups are all vtrain stops.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Collection, Iterator, Sequence
    from typing import Any

SUPPORTED = sys.platform.startswith("linux")
GUARD = os.path.abspath(__file__)
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
# Signals the guard must survive: they are sent to the replica's whole process group
# (a stop, a --kill :TERM) and meant for the command, which shares it.
_GROUP_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def _prctl(option: int, value: Any) -> bool:
    if not SUPPORTED:
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(option, value, 0, 0, 0) == 0)


def set_parent_death_signal(sig: int) -> bool:
    """Have the kernel send `sig` to this process when its parent dies (Linux); False elsewhere."""
    return _prctl(_PR_SET_PDEATHSIG, int(sig))


def kill_group(pgid: int, sig: int) -> None:
    """Send `sig` to process group `pgid`; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def has_children() -> bool:
    """False when this process has no child, live or exited: then it has no descendant either."""
    if not hasattr(os, "waitid"):
        return True
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def is_subreaper() -> bool:
    """True when orphaned descendants already come back to this process."""
    if not SUPPORTED:
        return False
    import ctypes

    flag = ctypes.c_int(0)
    return _prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag)) and bool(flag.value)


def become_subreaper(on: bool = True) -> bool:
    """Make orphaned descendants of this process come back to it (Linux); False elsewhere."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, int(on))


@contextlib.contextmanager
def reaping() -> Iterator[None]:
    """Inside: orphans come back to this process. At the end: what was started inside is stopped.

    Processes that were already there (a test's own servers) are left alone, and the
    subreaper setting is undone: vtrain may run inside a longer-lived program. A Popen
    started inside must be waited for inside: the end reaps every exited child it adopted.
    """
    before = set(descendants()) if has_children() else set()
    was = is_subreaper()
    become_subreaper()
    try:
        yield
    finally:
        stop_descendants(spare=before)
        if not was:
            become_subreaper(False)


def spawn(command: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen(command, **popen)` under a guard; OSError when the command cannot start."""
    import subprocess

    if not SUPPORTED:
        return subprocess.Popen(list(command), **popen)
    read_end, write_end = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", GUARD, str(os.getpid()), str(write_end), "--", *command],
            pass_fds=(write_end,),
            **popen,
        )
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    # The guard closes its end once the command runs, or writes why it could not start it.
    with os.fdopen(read_end, "rb") as status:
        failure = status.read()
    if failure:
        proc.wait()
        code = int(failure)
        raise OSError(code, os.strerror(code), command[0])
    return proc


def descendants(root: int | None = None) -> list[int]:
    """Every process under `root` (default: this one), parents before children; [] without /proc."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    for pid in _pids():
        fields = _stat(pid)
        if fields:
            children.setdefault(int(fields[1]), []).append(pid)
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def _reap_zombie_children(spare: Collection[int]) -> None:
    # Exited children we adopted; not `spare`, whose exit some Popen may still be waiting for.
    me = os.getpid()
    for pid in _pids():
        fields = _stat(pid)
        if fields and fields[0] == b"Z" and int(fields[1]) == me and pid not in spare:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def stop_descendants(spare: Collection[int] = (), rounds: int = 50) -> list[int]:
    """SIGKILL every live descendant of this process but `spare`, and reap them; their pids."""
    stopped: list[int] = []
    if not has_children():  # the common end: nothing left, and no need to read all of /proc
        return stopped
    for _ in range(rounds):
        left = [
            p
            for p in descendants()
            if p not in spare and (_stat(p) or [b"X"])[0] not in (b"Z", b"X")
        ]
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            stopped.append(pid)
        time.sleep(0.01)  # a SIGKILLed process takes a moment to become a zombie
        _reap_zombie_children(spare)
    _reap_zombie_children(spare)
    return stopped


def _pids() -> list[int]:
    try:
        return [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []


def _stat(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat after the name (state, ppid, pgrp, ...); [] once gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return []


# -- the guard, run as a script ----------------------------------------------------------


def _exit_as(status: int) -> None:
    """Exit with `status` as `os.wait` gave it: the same code, or death by the same signal."""
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        os._exit(code)
    import resource

    # Dying by SIGSEGV would also write a core of the guard, which nobody asked for.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if -code not in (signal.SIGKILL, signal.SIGSTOP):  # these two have no handler to reset
        signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
    os._exit(128 - code)  # a signal whose default is not to die


def guard(parent: int, status_fd: int, command: Sequence[str]) -> int:
    """Run `command`; stop all it started when it ends or when `parent` (vtrain) dies."""

    def on_signal(signum: int, frame: object) -> None:
        if os.getppid() != parent:  # the parent-death signal: vtrain is gone
            stop_descendants()
            os._exit(128 + signal.SIGKILL)
        # Otherwise it was sent to the group, and the command, in the group too, has it.

    for name in _GROUP_SIGNALS:
        signal.signal(getattr(signal, name), on_signal)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    become_subreaper()
    if os.getppid() != parent:  # vtrain died before the parent-death signal was set
        return 128 + signal.SIGKILL
    try:
        child = os.posix_spawnp(
            command[0],
            list(command),
            os.environ,
            # The interpreter ignores these; the command gets them as a shell would give them.
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
            file_actions=[(os.POSIX_SPAWN_CLOSE, status_fd)],
        )
    except OSError as e:
        os.write(status_fd, str(e.errno or 0).encode())
        return 127
    finally:
        os.close(status_fd)
    while True:
        pid, status = os.wait()  # orphans that came back to us are collected on the way
        if pid == child:
            break
    stop_descendants()
    _exit_as(status)
    return 1


if __name__ == "__main__":
    _parent, _fd, _dashes, *_command = sys.argv[1:]
    sys.exit(guard(int(_parent), int(_fd), _command))
