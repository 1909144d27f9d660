"""The one wait every plugin uses: probes on real sockets, its pauses, what it says meanwhile."""

from __future__ import annotations

import socket
import threading
import time
from datetime import timedelta

import pytest

from vtrain import LaunchError
from vtrain.plugins.wait import STEADY, Backoff, name_probe, tcp_probe, wait_for


def listening_later(delay: float) -> tuple[int, threading.Thread]:
    """A port that starts accepting connections after `delay` seconds, for a few seconds."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])

    def serve() -> None:
        time.sleep(delay)
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))
            server.listen()
            server.settimeout(10)
            try:
                while True:
                    conn, _ = server.accept()
                    conn.close()
            except OSError:
                return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return port, thread


def test_the_tcp_probe_says_why_until_the_port_listens() -> None:
    port, _ = listening_later(0.5)
    probe = tcp_probe("127.0.0.1", port)
    assert probe() is not None and "no answer" in str(probe())
    said: list[str] = []
    waited = wait_for(
        probe,
        what="the chief",
        address=f"127.0.0.1:{port}",
        source="TEST",
        deadline=timedelta(seconds=30),
        every=0.2,
        say=said.append,
    )
    assert waited >= 0.3 and probe() is None
    # While it waited it said what for, how long so far out of how long, and why.
    assert said, "no progress line while waiting"
    assert all(
        line.startswith(f"vtrain: waiting for the chief at 127.0.0.1:{port} (")
        and " of 30 s): no answer" in line
        for line in said
    ), said


def test_a_peer_that_never_comes_ends_in_an_error_naming_it_where_it_came_from() -> None:
    port, _ = listening_later(3600)
    with pytest.raises(LaunchError) as caught:
        wait_for(
            tcp_probe("127.0.0.1", port),
            what="the tracker",
            address=f"127.0.0.1:{port}",
            source="DMLC_TRACKER_URI:DMLC_TRACKER_PORT",
            deadline=timedelta(seconds=0.5),
            failed="did not accept connections",
            say=lambda line: None,
        )
    message = str(caught.value)
    assert message.startswith(
        "DMLC_TRACKER_URI:DMLC_TRACKER_PORT: the tracker did not accept connections within 0.5 s"
    ), message
    assert f"127.0.0.1:{port}" in message and "raise `wait=`" in message


def test_a_name_that_does_not_resolve_is_said_so() -> None:
    assert "does not resolve" in str(name_probe("no-such-host.invalid")())
    assert name_probe("localhost")() is None
    with pytest.raises(LaunchError, match="did not answer within 0.3 s: the name does not resolve"):
        wait_for(
            name_probe("no-such-host.invalid"),
            what="the chief",
            address="no-such-host.invalid",
            source="MASTER_ADDR",
            deadline=timedelta(seconds=0.3),
            say=lambda line: None,
        )


def test_a_framework_connect_is_a_probe_too_and_its_errors_are_not_swallowed() -> None:
    tries: list[float] = []

    def connect() -> str | None:
        tries.append(time.monotonic())
        return None if len(tries) == 3 else "refused"

    wait_for(connect, what="x", address="a", source="S", deadline=timedelta(seconds=10),
             backoff=STEADY)  # fmt: skip
    assert len(tries) == 3

    def broken() -> str | None:
        raise ValueError("the framework refuses this address for good")

    with pytest.raises(ValueError, match="for good"):
        wait_for(broken, what="x", address="a", source="S", deadline=timedelta(seconds=10))


def test_backoff_grows_to_its_ceiling_and_steady_does_not() -> None:
    pauses = Backoff(first=0.1, most=0.5, factor=2.0).pauses()
    assert [round(next(pauses), 3) for _ in range(5)] == [0.1, 0.2, 0.4, 0.5, 0.5]
    steady = STEADY.pauses()
    assert {next(steady) for _ in range(5)} == {0.05}
