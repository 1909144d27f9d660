"""Free loopback ports, held for a run's whole life so that concurrent runs never share one.

A port is ours when a bind to it succeeds *and* we hold an exclusive lock on a
file named for it in a per-user folder. The bind proves nobody listens there
now; the lock tells every other vtrain run that the port is taken even while
the replica that owns it is between a crash and its restart.
"""

from __future__ import annotations

# The C module under `socket`, which costs milliseconds at every start (vtrain.local.keeper).
import _socket
import contextlib
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from vtrain.errors import LaunchError
from vtrain.local.plan import LOOPBACK

_MAX_TRIES = 2000


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
    low, high = candidate_range()
    held: dict[int, int] = {}  # port -> lock file descriptor
    try:
        for _ in range(_MAX_TRIES):
            if len(held) == count:
                break
            # Random, so that concurrent runs rarely even try the same port.
            port = low + int.from_bytes(os.urandom(4), "big") % (high - low)
            if port in held:
                continue
            fd = _lock(os.path.join(folder, f"{port}.lock"))
            if fd is None:
                continue
            if not _bindable(port, host):
                _unlock(os.path.join(folder, f"{port}.lock"), fd)
                continue
            held[port] = fd
        if len(held) < count:
            raise LaunchError(
                f"found only {len(held)} free ports on {host} in {_MAX_TRIES} tries",
                value=count,
                expected=f"{count} free ports between {low} and {high - 1}",
                hint="stop other local jobs, or run fewer replicas",
            )
        yield tuple(held)
    finally:
        for port, fd in held.items():
            _unlock(os.path.join(folder, f"{port}.lock"), fd)
