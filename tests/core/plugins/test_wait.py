"""The wait for the chief: real sockets on 127.0.0.1, a clear error after the deadline."""

from __future__ import annotations

import socket
import threading
import time
from datetime import timedelta

import pytest

from vtrain import LaunchError
from vtrain.plugins.wait import wait_for_chief


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_waits_for_a_chief_that_starts_listening_late() -> None:
    port = free_port()
    listening = threading.Event()

    def chief() -> None:
        time.sleep(1.0)
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
            s.listen()
            listening.set()
            conn, _ = s.accept()
            conn.close()

    thread = threading.Thread(target=chief, daemon=True)
    thread.start()
    waited = wait_for_chief("127.0.0.1", port, timedelta(seconds=30))
    assert listening.is_set() and waited >= 0.5
    thread.join(5)


def test_gives_up_with_a_clear_error_when_nobody_listens() -> None:
    port = free_port()
    expected = (
        r"MASTER_ADDR:MASTER_PORT: the chief did not accept connections within 1 s: "
        rf"no answer .*\(got '127.0.0.1:{port}'\)"
    )
    with pytest.raises(LaunchError, match=expected):
        wait_for_chief("127.0.0.1", port, timedelta(seconds=1))


def test_an_unresolvable_name_is_reported_as_such() -> None:
    with pytest.raises(LaunchError, match="the name does not resolve"):
        wait_for_chief("no-such-host.invalid", 2222, timedelta(seconds=0.5))
