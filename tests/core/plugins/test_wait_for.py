"""The one wait every plugin uses: probes on real sockets, its pauses, what it says meanwhile."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from listeners import Listener

from vtrain import LaunchError
from vtrain.plugins.wait import STEADY, Backoff, name_probe, reply_probe, tcp_probe, wait_for


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

    wait_for(
        connect, what="x", address="a", source="S", deadline=timedelta(seconds=10), backoff=STEADY
    )
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


def _judge(first: bytes) -> str | None:
    return None if first == b"hello 42\n" else f"said {first!r}"


@pytest.mark.parametrize(
    ("first", "problem"),
    [
        (b"hello 42\n", None),
        (b"", "something listens there but said nothing in 0.3 s"),  # accepts, then silence
        (b"HTTP/1.1 400\r\n", r"said b'HTTP/1.1 400\r\n'"),
        (None, "said b''"),
    ],
    ids=["the-peer", "silent", "another-program", "hangs-up"],
)
def test_the_reply_probe_takes_only_the_peer_that_speaks(first: bytes | None, problem: str) -> None:
    listener = Listener(first)
    try:
        probe = reply_probe("127.0.0.1", listener.port, _judge, size=64, timeout=0.3)
        assert probe() == problem
    finally:
        listener.close()
    assert probe() == "no answer (Connection refused)"  # nothing listens any more


def test_a_silent_listener_cannot_stretch_the_wait_and_the_message_says_the_time_spent() -> None:
    listener = Listener(b"")
    try:
        start = time.monotonic()
        with pytest.raises(LaunchError) as caught:
            wait_for(
                reply_probe("127.0.0.1", listener.port, _judge, size=64, timeout=0.3),
                what="the chief",
                address=f"127.0.0.1:{listener.port}",
                source="S",
                deadline=timedelta(seconds=1),
                say=lambda line: None,
            )
        spent = time.monotonic() - start
    finally:
        listener.close()
    assert "did not answer within 1 s" in str(caught.value)
    assert "something listens there but said nothing in 0.3 s" in str(caught.value)
    assert spent < 30  # bounded: not a timing check, the old code never returned

    def slow() -> str | None:
        time.sleep(2.5)  # one try that runs far past the deadline
        return "still nothing"

    with pytest.raises(
        LaunchError,
        match=r"within 0\.5 s \(it gave up after 2\.\d+ s: a try ran "
        r"past the deadline\): still nothing",
    ):
        wait_for(slow, what="x", address="a", source="S", deadline=timedelta(seconds=0.5))


WATCHED = """
import sys, time
from vtrain.errors import LaunchError
from vtrain.plugins.wait import watchdog

def error(spent):
    return LaunchError(f"the framework's join did not return within 0.3 s", source="TEST")

with watchdog(5.0, error):
    time.sleep(0.1)  # returns in time: nothing happens
print("first block done", flush=True)
with watchdog(0.3, error):
    time.sleep(30)  # as a framework stuck in C code: no exception can reach it
print("never printed")
"""


def test_the_watchdog_ends_a_process_stuck_past_its_deadline_with_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WATCHED], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stdout == "first block done\n"
    assert done.stderr == ("-c: error: TEST: the framework's join did not return within 0.3 s\n"), (
        done.stderr
    )
