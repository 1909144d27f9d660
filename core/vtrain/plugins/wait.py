"""The one wait for a late peer, which every plugin's replicas go through.

Platforms start replicas minutes apart. Frameworks give up at once when the
chief's host name does not resolve yet ("host not found"), a torch worker that
is up before the chief burns its connect retries, ps-lite waits forever, and
XGBoost fails after a short window. So a replica waits here, for as long as
`DEFAULT_WAIT`, probing what it needs (a TCP port, a host name, the
framework's own connect), says every so often what it waits for, and fails at
the deadline with a message that names what it waited for and where that
address came from.

The deadline bounds the whole wait, whatever answers on the peer's port: each
try is short (a probe that reads the peer's first words, `reply_probe`, gives
up on a listener that says nothing), and a framework call that can block past
the deadline in C code runs under `watchdog`. A message never claims "within
10 s" for a wait that took longer.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta

from vtrain.cluster.fields import MAX_PORT, is_host, natural
from vtrain.errors import LaunchError, VtrainError, shown

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


WATCHDOG_GRACE = 3.0
"""Seconds past the deadline a framework call under `watchdog` is given: where the framework
has a timeout of its own at the same deadline (XGBoost's tracker), its error, which says
more, comes first, also to the other replicas, whose clocks started a moment apart."""

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


def reply_probe(
    host: str,
    port: int,
    judge: Callable[[bytes], str | None],
    *,
    size: int,
    timeout: float = 2.0,
) -> Probe:
    """A probe that connects to host:port and reads what the peer says first (up to `size`
    bytes, or a line); `judge` returns None when that is the framework's peer, else why not.

    An accepted connection proves only that something listens: another program on the
    port accepts and then says nothing, and a framework's own connect would wait on it
    without end. Here that costs one try of `timeout` seconds, and the wait goes on.
    """

    def probe() -> str | None:
        try:
            conn = socket.create_connection((host, port), timeout=timeout)
        except socket.gaierror as e:
            return f"the name does not resolve ({e.strerror})"
        except OSError as e:
            return f"no answer ({e.strerror or e})"
        data = b""
        with conn:
            try:
                while len(data) < size and b"\n" not in data:
                    chunk = conn.recv(size - len(data))
                    if not chunk:
                        break
                    data += chunk
            except TimeoutError:
                if not data:
                    return f"something listens there but said nothing in {_duration(timeout)}"
            except OSError as e:
                return f"the connection broke ({e.strerror or e})"
        return judge(data)

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
                f"{what} {failed} {_within(limit, now - start)}: {problem}",
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


def _within(limit: float, spent: float) -> str:
    """ "within 10 s"; and the time really spent, where one try ran well past the deadline."""
    if spent <= limit + max(1.0, 0.1 * limit):
        return f"within {_duration(limit)}"
    spent_text = _duration(spent)
    return f"within {_duration(limit)} (it gave up after {spent_text}: a try ran past the deadline)"


def _stderr(line: str) -> None:
    from vtrain.log import logger  # here: the plugins' start-up path reads no logging before

    logger(__name__).info(line)


@contextlib.contextmanager
def watchdog(seconds: float, error: Callable[[float], VtrainError]) -> Iterator[None]:
    """Run the block; should it still run after `seconds`, end the process (exit status 1)
    with `error(seconds spent)` as one line on stderr.

    For a framework call that blocks in C code and has no timeout of its own for this
    (XGBoost's collective init, ps-lite's registration, once something answers on the
    peer's port): no exception can reach a thread stuck there, so the deadline ends the
    process, as a platform would end a replica that hangs, and says why.
    """
    start = time.monotonic()
    lock = threading.Lock()
    finished: list[bool] = []

    def expire() -> None:
        with lock:
            if finished:
                return  # the block returned as the time ran out
            prog = os.path.basename(sys.argv[0]) or "python"
            with contextlib.suppress(Exception):
                from vtrain.log import logger

                logger(__name__).error(f"{prog}: error: {shown(error(time.monotonic() - start))}")
            os._exit(1)

    timer = threading.Timer(max(0.0, seconds), expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            finished.append(True)
        timer.cancel()


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
