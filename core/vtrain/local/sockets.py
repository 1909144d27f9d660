"""Which TCP sockets each replica listens on and connects from, read from /proc while it runs.

The probe (`vtrain.local.probe`) sees what Python code binds and connects; this sees
what native code does too (gloo, gRPC, ps-lite, XGBoost's tracker). A thread looks
every SAMPLE_SECONDS: the processes of each replica's session, their socket inodes
(/proc/PID/fd), and those inodes' addresses in /proc/net/tcp and tcp6. Linux only;
elsewhere it sees nothing.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Mapping

SAMPLE_SECONDS = 0.5
_LISTEN, _ESTABLISHED, _SYN_SENT = "0A", "01", "02"

Socket = tuple[str, str, str, str]
"""(replica, "listen" or "connect", local HOST:PORT, remote HOST:PORT)."""


def _address(text: str) -> str:
    """/proc/net/tcp's ``0100007F:1F90`` (or its 32-digit IPv6 form) as ``127.0.0.1:8080``."""
    host, port = text.split(":")
    if len(host) == 32:
        if host[:24] == "0000000000000000FFFF0000":  # an IPv4-mapped address
            host = host[24:]
        elif host == "0" * 32:
            return f":::{int(port, 16)}"
        else:
            return f"[ipv6]:{int(port, 16)}"
    octets = [str(int(host[i : i + 2], 16)) for i in (6, 4, 2, 0)]
    return f"{'.'.join(octets)}:{int(port, 16)}"


def _table() -> dict[str, tuple[str, str, str]]:
    """Socket inode -> (state, local, remote) of every TCP socket on this machine."""
    found = {}
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] in (_LISTEN, _ESTABLISHED, _SYN_SENT):
                found[fields[9]] = (fields[3], fields[1], fields[2])
    return found


def _sessions(leaders: Mapping[int, str]) -> dict[int, str]:
    """Every live process whose session one of `leaders` leads -> that replica's name."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    session = int(f.read().rsplit(")", 1)[1].split()[3])
            except (OSError, IndexError, ValueError):
                continue
            if session in leaders:
                found[int(entry)] = leaders[session]
    return found


def sample(leaders: Mapping[int, str]) -> set[Socket]:
    """The TCP sockets the sessions led by `leaders` (pid -> replica name) hold now."""
    inodes: dict[str, str] = {}
    for pid, name in _sessions(leaders).items():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes[link[8:-1]] = name
    if not inodes:
        return set()
    found = set()
    for inode, (state, local, remote) in _table().items():
        if inode in inodes:
            kind = "listen" if state == _LISTEN else "connect"
            found.add((inodes[inode], kind, _address(local), _address(remote)))
    return found


class Sampler:
    """A daemon thread that samples the replicas' sockets until `stop`; `found` holds them all."""

    def __init__(self, leaders: Callable[[], Mapping[int, str]]) -> None:
        self.found: set[Socket] = set()
        self._leaders = leaders
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="vtrain-sockets", daemon=True)

    def start(self) -> Sampler:
        """Start sampling; returns self."""
        if os.path.isdir("/proc/net"):
            self._thread.start()
        return self

    def sample_now(self) -> None:
        """Take one sample at once (a replica may be about to end)."""
        leaders = dict(self._leaders())
        if leaders:
            self.found |= sample(leaders)

    def _loop(self) -> None:
        while not self._done.wait(SAMPLE_SECONDS):
            with contextlib.suppress(Exception):  # a look at /proc never stops the job
                self.sample_now()

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
