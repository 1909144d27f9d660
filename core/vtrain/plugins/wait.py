"""The patient wait for a late chief, which every plugin's non-chief replicas go through.

Platforms start replicas minutes apart. Frameworks give up at once when the
chief's host name does not resolve yet ("host not found"), and a worker that is
up before the chief burns its connect retries (torch), or an XGBoost worker
fails after a short window. This waits, with backoff, until the name resolves
and the port accepts a connection, and fails with a message that says what it
waited for.
"""

from __future__ import annotations

import socket
import time
from datetime import timedelta

from vtrain.cluster.fields import MAX_PORT, is_host, natural
from vtrain.errors import LaunchError

_FIRST_PAUSE = 0.1
_MAX_PAUSE = 2.0


def wait_for_chief(
    host: str,
    port: int,
    deadline: timedelta,
    *,
    what: str = "the chief",
    source: str = "MASTER_ADDR:MASTER_PORT",
) -> float:
    """Block until host:port accepts a TCP connection; return the seconds waited.

    `what` and `source` name the service and where its address came from, for the error.
    """
    start = time.monotonic()
    limit = start + deadline.total_seconds()
    pause = _FIRST_PAUSE
    last_error = "not tried"
    while True:
        try:
            with socket.create_connection((host, port), timeout=max(0.1, min(5.0, pause * 5))):
                return time.monotonic() - start
        except socket.gaierror as e:
            last_error = f"the name does not resolve ({e.strerror})"
        except OSError as e:
            last_error = f"no answer ({e.strerror or e})"
        if time.monotonic() + pause > limit:
            raise LaunchError(
                f"{what} did not accept connections within {deadline.total_seconds():g} s: "
                f"{last_error}",
                source=source,
                value=f"{host}:{port}",
                hint=f"{what} may still be starting: raise `wait=` in configure(), "
                "or check that it runs and listens on that port",
            )
        time.sleep(pause)
        pause = min(pause * 2, _MAX_PAUSE)


def split_address(address: str, source: str) -> tuple[str, int]:
    """``host:port`` (or ``[v6]:port``) as a (host, port) pair."""
    host, _, port = address.rpartition(":")
    number = natural(port)
    if not is_host(host) or number is None or not 1 <= number <= MAX_PORT:
        raise LaunchError(
            "not an address",
            source=source,
            value=address,
            expected="host:port, or [v6]:port, with a port from 1 to 65535",
        )
    return host.removeprefix("[").removesuffix("]"), number
