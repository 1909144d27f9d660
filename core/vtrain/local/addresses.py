"""Each replica's own loopback address, as each machine of a job has an address of its own.

Linux routes all of 127.0.0.0/8 to the loopback interface: a process can listen on
127.0.0.2 and its peers reach it there, with no setup. A replica that listens on
127.0.0.1 (or connects to 127.0.0.1 for a peer) then fails here as it would on
Vertex. Where the system refuses these addresses (macOS, some containers), every
replica shares 127.0.0.1, and the job says so.
"""

from __future__ import annotations

# The C module under `socket`, which costs milliseconds at every start (vtrain.local.keeper).
import _socket

from vtrain.local.plan import LOOPBACK

# 127.0.1.N is where the Kubeflow writer puts XGBoost's WORKER_ADDRS without addresses of
# their own, and Debian names the machine's hostname 127.0.1.1: the replicas skip 127.0.1.x.
_FIRST_ROW = 253  # 127.0.0.2 .. 127.0.0.254
_ROW = 254  # 127.0.R.1 .. 127.0.R.254, R from 2


def replica_host(n: int) -> str:
    """The loopback address of the `n`-th replica in rank order: 127.0.0.2 for the chief."""
    if n < _FIRST_ROW:
        return f"127.0.0.{n + 2}"
    row, col = divmod(n - _FIRST_ROW, _ROW)
    return f"127.0.{row + 2}.{col + 1}"


def separate_hosts(count: int) -> tuple[str, ...] | None:
    """`count` addresses of their own, or None where this system refuses to bind them."""
    hosts = tuple(replica_host(n) for n in range(count))
    for host in {hosts[0], hosts[-1]}:
        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        try:
            s.bind((host, 0))
        except OSError:
            return None
        finally:
            s.close()
    return hosts


def shared_host_note() -> str:
    """What the job says when its replicas share 127.0.0.1."""
    return (
        f"this system refuses loopback addresses other than {LOOPBACK}: every replica "
        f"listens on {LOOPBACK}, and a server bound to {LOOPBACK} (not its cluster address) "
        "is not caught here"
    )
