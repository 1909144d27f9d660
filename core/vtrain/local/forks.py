"""Every fork on the machine as it happens, from the kernel's process connector: who is whose child.

The watcher (`vtrain.local.watch`) is told a pid for each write; a subprocess
that wrote a file (``sh -c 'echo w > f'``) may be gone, and reaped, before the
write is read, and with it the /proc entry that named its parent. The process
connector (a netlink socket, root only) reports each fork as it happens, before
the child can write anything: read up to date, it knows the ancestry of every
pid a write names, however short-lived.
"""

from __future__ import annotations

# `socket` turns its constants into enums as it is imported (ms): the C module has all we need.
import _socket
import contextlib
import os
import struct
from collections.abc import Callable, Container

_NETLINK_CONNECTOR = 11
_CN_IDX_PROC = 1
_CN_VAL_PROC = 1
_PROC_CN_MCAST_LISTEN = 1
_NLMSG_DONE = 3
_PROC_EVENT_FORK = 0x00000001
_HEADERS = 16 + 20  # nlmsghdr, cn_msg
_EVENT = struct.Struct("=II Q IIII")  # what, cpu, timestamp, parent pid, parent tgid, child ...


class Forks:
    """The parent of each process forked since `open()`; `parent(pid)` after `update()`."""

    def __init__(self, sock: _socket.socket) -> None:
        self._sock = sock
        self._parents: dict[int, int] = {}
        self.lost = False
        """Some fork was not heard (the socket's buffer overflowed): ancestry may have gaps."""

    @classmethod
    def open(cls) -> Forks | None:
        """Listen to the kernel's forks, or None where this machine does not let us."""
        try:
            sock = _socket.socket(_socket.AF_NETLINK, _socket.SOCK_DGRAM, _NETLINK_CONNECTOR)
        except (OSError, AttributeError):  # not Linux, or no netlink in this sandbox
            return None
        try:
            sock.bind((0, _CN_IDX_PROC))
            sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_RCVBUF, 4 << 20)
            op = struct.pack("=I", _PROC_CN_MCAST_LISTEN)
            cn = struct.pack("=IIIIHH", _CN_IDX_PROC, _CN_VAL_PROC, 0, 0, len(op), 0) + op
            sock.send(struct.pack("=IHHII", 16 + len(cn), _NLMSG_DONE, 0, 0, 0) + cn)
            sock.setblocking(False)
        except OSError:  # EPERM: it needs CAP_NET_ADMIN
            sock.close()
            return None
        return cls(sock)

    def update(self) -> None:
        """Read every fork heard so far (call before asking about a pid seen since)."""
        while True:
            try:
                data = self._sock.recv(65536)
            except BlockingIOError:
                return
            except OSError:  # ENOBUFS: the kernel dropped messages
                self.lost = True
                continue
            offset = 0
            while offset + 16 <= len(data):
                length = struct.unpack_from("=I", data, offset)[0]
                if length < 16:
                    break
                if length >= _HEADERS + _EVENT.size:
                    what, _, _, _, parent, child_pid, child = _EVENT.unpack_from(
                        data, offset + _HEADERS
                    )
                    # A new thread (child_pid != its tgid) is no new process.
                    if what == _PROC_EVENT_FORK and child_pid == child:
                        self._parents[child] = parent
                offset += (length + 3) & ~3

    def parent(self, pid: int) -> int | None:
        """The process that forked `pid`, or None for one forked before `open()` (which no
        replica is: they all start after)."""
        return self._parents.get(pid)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()


def ancestor(parent: Callable[[int], int | None], pid: int, wanted: Container[int]) -> int | None:
    """The nearest of `pid` and its ancestors that `wanted` holds; None when the line reaches
    init, vtrain itself or a gap first."""
    for _ in range(64):  # no process tree is this deep in practice: a cycle would be a bug
        if pid in wanted:
            return pid
        if pid in (0, 1, os.getpid()):
            return None
        up = parent(pid)
        if up is None:
            return None
        pid = up
    return None
