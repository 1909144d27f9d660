"""Free loopback ports, held for a run's whole life so that concurrent runs never share one.

A port is ours when a bind to it succeeds *and* we hold an exclusive lock named
for it in a per-user folder. The bind proves nobody listens there now; the lock
tells every other vtrain run that the port is taken even while the replica that
owns it is between a crash and its restart.

On Linux a lock is a Unix socket bound to a name in the abstract namespace,
made of the folder's device and inode and the port: the kernel lets one socket
hold a name, and frees it when the socket closes, also when its process is
killed. Nothing is written to disk: a new file is an inode, which cost from 50
to 500 µs of kernel time each on a busy VM, eight per job before its first
replica could start. Elsewhere the lock is `flock` on a file in the folder.
"""

from __future__ import annotations

# The C module under `socket`, which costs milliseconds at every start (vtrain.local.keeper).
import _socket
import contextlib
import errno
import fcntl
import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from vtrain.errors import LaunchError
from vtrain.local.plan import LOOPBACK

_MAX_TRIES = 2000
ABSTRACT = sys.platform.startswith("linux")
"""Locks are abstract Unix sockets (Linux), not files."""


def lock_dir() -> str:
    """The per-user folder holding one lock file per reserved port."""
    # /tmp, not $TMPDIR: concurrent runs must agree on the folder whatever their environment.
    return os.path.join("/tmp", f"vtrain-ports-{os.getuid()}")


def candidate_range() -> tuple[int, int]:
    """Ports to pick from: below the kernel's ephemeral range, which outgoing connections use.

    A port the kernel may hand to any outgoing connection could be taken while a
    crashed replica restarts; below that range only explicit binds compete.
    """
    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return (10000, low) if low > 12000 else (low, 65536)


def _namespace(folder: str) -> bytes | None:
    """The prefix of the abstract socket names that lock ports for `folder`; None: files."""
    if not ABSTRACT:
        return None
    found = os.stat(folder)
    return b"\0vtrain-port-%d-%d-" % (found.st_dev, found.st_ino)


def _take(folder: str, namespace: bytes | None, port: int) -> Callable[[], None] | None:
    """Lock `port`: the function that lets it go, or None when another run holds it."""
    if namespace is not None:
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            s.bind(namespace + b"%d" % port)
        except OSError as e:
            s.close()
            if e.errno == errno.EADDRINUSE:
                return None
            raise
        return s.close
    path = os.path.join(folder, f"{port}.lock")
    fd = _lock(path)
    return None if fd is None else functools.partial(_unlock, path, fd)


def _lock(path: str) -> int | None:
    """An open descriptor holding the exclusive lock on `path`, or None when another has it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # The holder we waited on may have removed the file as it let go: our lock would be
        # on a nameless file, and the next run would lock a new one. Only the named file counts.
        if os.stat(path).st_ino == os.fstat(fd).st_ino:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _unlock(path: str, fd: int) -> None:
    # Remove the file while still holding the lock, so that the folder does not fill up.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    os.close(fd)


def _bindable(port: int, host: str) -> bool:
    # No SO_REUSEADDR: a port with connections in TIME_WAIT is refused too.
    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        s.bind((host, port))
    except OSError:
        return False
    finally:
        s.close()
    return True


@contextmanager
def reserve_ports(
    count: int, *, host: str = LOOPBACK, folder: str | None = None
) -> Iterator[tuple[int, ...]]:
    """Reserve `count` distinct free ports on `host` until the block exits."""
    folder = folder or lock_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    namespace = _namespace(folder)
    low, high = candidate_range()
    held: dict[int, Callable[[], None]] = {}  # port -> what lets its lock go
    try:
        for _ in range(_MAX_TRIES):
            if len(held) == count:
                break
            # Random, so that concurrent runs rarely even try the same port.
            port = low + int.from_bytes(os.urandom(4), "big") % (high - low)
            if port in held:
                continue
            release = _take(folder, namespace, port)
            if release is None:
                continue
            if not _bindable(port, host):
                release()
                continue
            held[port] = release
        if len(held) < count:
            raise LaunchError(
                f"found only {len(held)} free ports on {host} in {_MAX_TRIES} tries",
                value=count,
                expected=f"{count} free ports between {low} and {high - 1}",
                hint="stop other local jobs, or run fewer replicas",
            )
        yield tuple(held)
    finally:
        for release in held.values():
            release()
