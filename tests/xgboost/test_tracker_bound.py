"""The chief's port: `wait` bounds a trainer's entry whatever answers there, and a chief killed
with workers connected binds it again at once when it restarts.

Real processes, real XGBoost, real listeners on 127.0.0.1.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from cluster_run import clean_env
from listeners import Listener
from platform_examples import tf_config

from vtrain_xgboost.tracker import GREETING, tracker_port


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def silent() -> Iterator[Listener]:
    listener = Listener()
    yield listener
    listener.close()


def configure(role: str, chief: str, wait: float = 3, **popen: object) -> subprocess.Popen[str]:
    cluster = {"chief": [chief], "worker": [f"127.0.0.1:{free_port()}"]}
    code = (
        "import datetime, sys, time, vtrain\n"
        "h = vtrain.plugins.get('xgboost').configure("
        f"wait=datetime.timedelta(seconds={wait}))\n"
        "print('joined', h.rank, flush=True)\n"
        "time.sleep(120)\n"
    )
    env = clean_env(TF_CONFIG=tf_config(cluster, role, 0))
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,  # type: ignore[call-overload]
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    # The bound is `wait`; the test's timeout is far above it: a hang is a TimeoutExpired.
    _, err = process.communicate(timeout=90)
    return process.returncode, err


@pytest.mark.parametrize(
    ("first", "problem"),
    [
        (b"", "something listens there but said nothing in 1 s"),
        (
            b"HTTP/1.1 400 Bad Request\r\n",
            r"something else answers there \(b'HTTP/1\.1 400 Bad "
            r"Request\\r\\n'\), not vtrain's XGBoost chief",
        ),
    ],
    ids=["silent", "another-program"],
)
def test_another_program_on_the_chiefs_port_ends_a_workers_wait_at_the_deadline(
    first: bytes, problem: str
) -> None:
    listener = Listener(first, hang_up=bool(first))  # another program answers, then hangs up
    try:
        code, err = finish(configure("worker", f"127.0.0.1:{listener.port}"))
    finally:
        listener.close()
    assert code == 1, err
    assert re.search(
        r"LaunchError: TF_CONFIG: cluster: XGBoost's tracker did not answer within 3 s"
        rf"( \(it gave up after [\d.]+ s: a try ran past the deadline\))?: {problem} "
        rf"\(got '127\.0\.0\.1:{listener.port}'\)",
        err,
    ), err


def test_a_chief_whose_address_is_not_its_own_is_told_so() -> None:
    # 192.0.2.1 (TEST-NET-1) is on no interface here: the doorway cannot bind it, for good.
    code, err = finish(configure("chief", f"192.0.2.1:{free_port()}", wait=2))
    assert code == 1, err
    assert re.search(
        r"LaunchError: TF_CONFIG: cluster: XGBoost's tracker cannot listen on 192\.0\.2\.1:\d+: "
        r"Cannot assign requested address \(got '192\.0\.2\.1:\d+'\); expected a port of the "
        r"chief's that nothing else uses",
        err,
    ), err


def test_a_worker_stuck_inside_xgboosts_entry_is_ended_at_the_deadline(silent: Listener) -> None:
    # The doorway names a "tracker" that accepts and never answers: XGBoost's init blocks in
    # C code on it, and only the watchdog ends the worker, with one line.
    doorway = Listener(b"%s %d\n" % (GREETING, silent.port), hang_up=True)
    try:
        code, err = finish(configure("worker", f"127.0.0.1:{doorway.port}"))
    finally:
        doorway.close()
    assert code == 1, err
    (line,) = [ln for ln in err.splitlines() if "error:" in ln]
    # It says the time it really waited: the deadline, and the grace a framework gets past it.
    assert re.fullmatch(
        r"-c: error: TF_CONFIG: cluster: XGBoost's collective did not form within 3 s \(entered "
        rf"at the tracker 127\.0\.0\.1:{silent.port}, still waiting for the others after \d+ s\) "
        r"\(got 2\); expected 2 trainers \(the chief and the workers\) reaching the tracker "
        rf"behind 127\.0\.0\.1:{doorway.port}\. Hint: a world size larger than the replicas "
        r"that run\? a trainer that crashed or started too late\? raise `wait=` in configure\(\) "
        r"for slow starts",
        line,
    ), err


def test_a_chief_killed_with_workers_connected_binds_its_port_again_at_once() -> None:
    chief_address = f"127.0.0.1:{free_port()}"
    port = int(chief_address.rsplit(":", 1)[1])
    cluster = {"chief": [chief_address], "worker": [f"127.0.0.1:{free_port()}"]}
    code = (
        "import datetime, time, vtrain\n"
        "h = vtrain.plugins.get('xgboost').configure(wait=datetime.timedelta(seconds=60))\n"
        "print('joined', h.rank, flush=True)\n"
        "time.sleep(120)\n"
    )

    def start(role: str, wait: int = 60) -> subprocess.Popen[str]:
        env = clean_env(TF_CONFIG=tf_config(cluster, role, 0))
        return subprocess.Popen(
            [sys.executable, "-c", code.replace("seconds=60", f"seconds={wait}")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    chief, worker = start("chief"), start("worker")
    try:
        assert chief.stdout is not None and worker.stdout is not None
        assert _line_from(chief, "joined") == "joined 0"
        assert _line_from(worker, "joined") == "joined 1"
        # Connections from the chief's port stay open to the worker: it is in the collective.
        chief.send_signal(signal.SIGKILL)
        chief.wait(timeout=30)
        # Restarted at once on the same port: it binds, and its doorway names a new tracker.
        again = start("chief", wait=5)
        try:
            line = _doorway_line(port, until=time.monotonic() + 30)
            assert tracker_port(line) is not None, line
            code, err = finish(again)
        finally:
            if again.poll() is None:
                again.kill()
                again.wait()
        assert "did not come free" not in err and "Address already in use" not in err, err
        assert "waiting for XGBoost's tracker's port" not in err, err
        # (The old worker never rejoins: the restarted chief's world does not form, as it would
        # not on a platform that restarts only the chief.)
        assert code == 1 and "XGBoost's collective did not form within 5 s" in err, err
    finally:
        for process in (chief, worker):
            if process.poll() is None:
                process.kill()
            process.wait()


def _line_from(process: subprocess.Popen[str], prefix: str) -> str:
    """The first line of `process` that starts with `prefix` (XGBoost prints its own lines)."""
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(prefix):
            return line.rstrip("\n")
    raise AssertionError(f"no {prefix!r} line; stderr: {process.communicate()[1]}")


def _doorway_line(port: int, until: float) -> bytes:
    """The first line the chief's port says once something listens there."""
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
                conn.settimeout(5)
                return conn.recv(64)
        except OSError:
            if time.monotonic() > until:
                raise
            time.sleep(0.05)
