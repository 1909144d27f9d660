"""The one wait for a late peer, which every plugin's replicas go through.

Platforms start replicas minutes apart. Frameworks give up at once when the
chief's host name does not resolve yet ("host not found"), a torch worker that
is up before the chief burns its connect retries, ps-lite waits forever, and
XGBoost fails after a short window. So a replica waits here, for as long as
`DEFAULT_WAIT`, probing what it needs (a TCP port, a host name, the
framework's own connect), says every so often what it waits for, and fails at
the deadline with a message that names what it waited for and where that
address came from.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta

from vtrain.cluster.fields import MAX_PORT, is_host, natural
from vtrain.errors import LaunchError

DEFAULT_WAIT = timedelta(minutes=30)
"""How long a replica waits for a peer: platforms start replicas minutes apart, and a
frameworks' own default (seconds, or forever) has failed or hung real jobs."""
PROGRESS_EVERY = 15.0
"""Seconds between "still waiting" lines: no replica stays silent for half a minute."""

Probe = Callable[[], "str | None"]
"""One try: None when the peer is there, else why not, in a few words."""


@dataclass(frozen=True)
class Backoff:
    """The pauses between tries: `first`, times `factor` each time, at most `most` seconds."""

    first: float = 0.1
    most: float = 2.0
    factor: float = 2.0

    def pauses(self) -> Iterator[float]:
        """The pause before each next try, forever."""
        pause = self.first
        while True:
            yield pause
            pause = min(pause * self.factor, self.most)


STEADY = Backoff(first=0.05, most=0.05, factor=1.0)
"""For a service every worker waits for at its start: a second lost after it is up is a
second of every job's start, so it is tried every 50 ms, not after a growing pause."""


def tcp_probe(host: str, port: int, timeout: float = 1.0) -> Probe:
    """A probe that succeeds when host:port accepts a TCP connection."""

    def probe() -> str | None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return None
        except socket.gaierror as e:
            return f"the name does not resolve ({e.strerror})"
        except OSError as e:
            return f"no answer ({e.strerror or e})"

    return probe


def name_probe(host: str) -> Probe:
    """A probe that succeeds when `host` resolves (a platform publishes a name once it runs)."""

    def probe() -> str | None:
        try:
            socket.getaddrinfo(host, None)
            return None
        except socket.gaierror as e:
            return f"the name does not resolve ({e.strerror})"

    return probe


def _duration(seconds: float) -> str:
    if seconds >= 120:
        return f"{seconds / 60:g} min"
    return f"{seconds:.3g} s" if seconds < 10 else f"{seconds:.0f} s"


def wait_for(
    probe: Probe,
    *,
    what: str,
    address: str,
    source: str,
    deadline: timedelta,
    backoff: Backoff = Backoff(),
    hint: str | None = None,
    failed: str = "did not answer",
    every: float = PROGRESS_EVERY,
    say: Callable[[str], None] | None = None,
) -> float:
    """Try `probe` until it succeeds; return the seconds waited, or raise LaunchError at `deadline`.

    `what` and `address` name the peer ("the chief", "127.0.0.1:2222"), `source`
    where its address came from, and `failed` what it did not do, for the error.
    Every `every` seconds of waiting one line says what it waits for, how long
    so far, out of how long, and why the last try failed: `say` prints it
    (default: this replica's stderr).
    """
    start = time.monotonic()
    limit = deadline.total_seconds()
    next_line = start + every
    tell = _stderr if say is None else say
    for pause in backoff.pauses():
        problem = probe()
        now = time.monotonic()
        if problem is None:
            return now - start
        if now - start + pause > limit:
            raise LaunchError(
                f"{what} {failed} within {_duration(limit)}: {problem}",
                source=source,
                value=address,
                hint=hint
                or f"{what} may still be starting: raise `wait=` in configure(), "
                "or check that it runs and listens there",
            )
        if now >= next_line:
            tell(
                f"vtrain: waiting for {what} at {address} "
                f"({_duration(now - start)} of {_duration(limit)}): {problem}"
            )
            next_line = now + every
        time.sleep(pause)
    raise AssertionError("unreachable: pauses() never ends")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def wait_for_chief(
    host: str,
    port: int,
    deadline: timedelta,
    *,
    what: str = "the chief",
    source: str = "MASTER_ADDR:MASTER_PORT",
) -> float:
    """Block until host:port accepts a TCP connection; return the seconds waited."""
    return wait_for(
        tcp_probe(host, port, timeout=1.0),
        what=what,
        address=f"{host}:{port}",
        source=source,
        deadline=deadline,
        failed="did not accept connections",
    )


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
