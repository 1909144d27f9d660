"""This process as the owner of a file or a folder, and whether a recorded owner still runs.

A pid alone names a process badly: a restarted container numbers its processes
from 1 again, and a busy machine reuses pids. So an owner is the pid with its
start time (clock ticks after boot, from /proc), the boot it belongs to and
the host name. Where /proc is missing, the start time and boot are None and
only the pid is checked.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from vtrain.process_start import start_time

_BOOT_ID = "/proc/sys/kernel/random/boot_id"


@dataclass(frozen=True)
class Owner:
    """One process, named well enough to tell whether it still runs."""

    pid: int
    host: str
    start: int | None = None
    """Clock ticks between the boot and the process's start; None where /proc is missing."""
    boot: str | None = None
    """The kernel's boot id; None where /proc is missing."""

    def __str__(self) -> str:
        return f"pid {self.pid} on {self.host}"


def _boot_id() -> str | None:
    try:
        with open(_BOOT_ID) as f:
            return f.read().strip() or None
    except OSError:
        return None


_me: list[Owner] = []  # this process, made once; a forked child makes its own


def me() -> Owner:
    """This process."""
    pid = os.getpid()
    if not _me or _me[0].pid != pid:
        _me[:] = [Owner(pid, socket.gethostname(), start_time(pid), _boot_id())]
    return _me[0]


def running(owner: Owner) -> bool | None:
    """True if `owner` runs, False if it is gone, None if this machine cannot tell."""
    here = me()
    if owner.host != here.host:
        return None
    if owner.boot is not None and here.boot is not None and owner.boot != here.boot:
        return False  # a reboot, or another machine under the same name: not running here
    if owner.pid == here.pid:
        return owner.start is None or owner.start == here.start
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it runs
    if owner.start is not None:
        started = start_time(owner.pid)
        if started is not None and started != owner.start:
            return False  # the pid was given to a newer process
    return True
