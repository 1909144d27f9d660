"""`wait` bounds a replica's whole entry, whatever answers on the scheduler's port.

Another program listening there used to pass the TCP probe, and ps-lite then
waited on it forever. Each case runs a real replica against a real listener.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from cluster_run import clean_env
from platform_examples import cluster_spec

ZMQ_SIGNATURE = b"\xff" + b"\x00" * 7 + b"\x01\x7f"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def listener(request: pytest.FixtureRequest) -> Iterator[str]:
    """A real socket on the scheduler's port that accepts and then says `request.param`."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)  # kept open: the peer waits on a connection that never talks
            if request.param:
                conn.sendall(request.param)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for conn in held:
            conn.close()


def configure(pool: str, scheduler: str) -> subprocess.CompletedProcess[str]:
    spec = {
        "workerpool0": [scheduler],
        "workerpool1": [f"127.0.0.1:{free_port()}"],
        "workerpool2": [f"127.0.0.1:{free_port()}"],
    }
    code = (
        "from datetime import timedelta; import vtrain\n"
        "vtrain.plugins.get('mxnet').configure(wait=timedelta(seconds=2))"
    )
    env = clean_env(CLUSTER_SPEC=cluster_spec(spec, pool, 0))
    # The bound is `wait` and the test's timeout is far above it; a hang ends in TimeoutExpired.
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=90
    )


@pytest.mark.parametrize(
    ("listener", "pool", "problem"),
    [
        (b"", "workerpool1", "something listens there but said nothing in 1 s"),
        (b"", "workerpool2", "something listens there but said nothing in 1 s"),
        (
            b"SSH-2.0-OpenSSH_9.6\r\n",
            "workerpool1",
            # The first ten bytes are read: as many as ZeroMQ's greeting has.
            r"something else answers there \(b'SSH-2\.0-Op'\), not a ZeroMQ peer",
        ),
    ],
    indirect=["listener"],
    ids=["silent-to-a-worker", "silent-to-a-server", "another-program"],
)
def test_another_program_on_the_schedulers_port_ends_the_wait_at_the_deadline(
    listener: str, pool: str, problem: str
) -> None:
    done = configure(pool, listener)
    assert done.returncode == 1, done.stderr
    assert re.search(
        r"DMLC_PS_ROOT_URI:DMLC_PS_ROOT_PORT: the MXNet scheduler did not answer within 2 s"
        rf"( \(it gave up after [\d.]+ s: a try ran past the deadline\))?: {problem} "
        rf"\(got '{listener}'\)",
        done.stderr,
    ), done.stderr


@pytest.mark.parametrize("listener", [ZMQ_SIGNATURE], indirect=True, ids=["zmq-greeting-only"])
def test_a_worker_stuck_inside_ps_lite_is_ended_at_the_deadline(listener: str) -> None:
    # It greets as ZeroMQ does, then never finishes the handshake: ps-lite's registration
    # blocks in C, and only the watchdog ends it, with one line.
    done = configure("workerpool1", listener)
    assert done.returncode == 1, done.stderr
    (line,) = [ln for ln in done.stderr.splitlines() if "error:" in ln]
    # It says the time it really waited: the deadline, and the grace a framework gets past it.
    assert re.fullmatch(
        r"-c: error: DMLC_NUM_WORKER, DMLC_NUM_SERVER: MXNet's kvstore did not form within 2 s "
        rf"\(this worker reached the scheduler at {listener}; not every other node came in "
        r"\d+ s\) \(got '1 workers, 1 servers'\)\. Hint: a replica that crashed or started too "
        r"late\? raise `wait=` in configure\(\) for slow starts",
        line,
    ), done.stderr
