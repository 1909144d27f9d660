"""The end of a job whose other replicas serve: they are stopped at once, trainers finish.

The replicas run under a plugin defined in replicas/serving.py: its parameter
servers serve through `run_service`, which tells the launcher so at run time.
The grace that trainers get after the chief's success is two minutes here: a
server that waited for it would show in the notes, and in how it was stopped.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from local_procs import MARK

from vtrain.local import Plan, run_job
from vtrain.local.serving import ServingFiles
from vtrain.plugins import serve
from vtrain.variables import SERVES_FILE

SERVING = str(Path(__file__).parent / "replicas" / "serving.py")


def run(plan: Plan, mark: str) -> tuple[Any, str]:
    stream = io.StringIO()
    result = run_job(plan, stream=stream, environ={**os.environ, MARK: mark})
    return result, stream.getvalue()


@pytest.fixture(autouse=True)
def long_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vtrain.local.restart_policy.SUCCESS_GRACE_SECONDS", 120.0)


def test_servers_stop_at_once_and_trainers_end_by_themselves(tmp_path: Path, mark: str) -> None:
    plan = Plan.from_options(
        [sys.executable, SERVING, "--finish", "0.3"],
        workers=1,
        ps=2,
        output_dir=str(tmp_path / "job"),
    )
    result, shown = run(plan, mark)
    assert (result.outcome, result.status) == ("succeeded", 0), shown
    ended = {r.name: r for r in result.replicas}
    for name in ("ps-0", "ps-1"):  # SIGTERM is a server's normal end: run_service exits 0
        assert (ended[name].exit_code, ended[name].stopped, ended[name].after_success) == (
            0,
            True,
            True,
        ), shown
    assert (ended["worker-0"].exit_code, ended["worker-0"].stopped) == (0, False), shown
    assert "stopping ps-0, ps-1 at once after the chief's success" in shown
    assert "the other replicas (worker-0) have 120 s to exit" in shown
    assert "worker-0 exited with 0 after the chief's success" in shown


def test_a_replica_that_served_before_its_restart_trains_after_it(
    tmp_path: Path, mark: str
) -> None:
    first = tmp_path / "first"
    first.mkdir()
    plan = Plan.from_options(
        [sys.executable, SERVING, "--finish", "0.3", "--serve-first", str(first)],
        workers=1,
        output_dir=str(tmp_path / "job"),
    )
    result, shown = run(plan, mark)
    assert (result.outcome, result.status) == ("succeeded", 0), shown
    worker = {r.name: r for r in result.replicas}["worker-0"]
    assert (worker.restarts, worker.exit_code, worker.stopped) == (1, 0, False), shown
    assert "at once after the chief's success" not in shown


def test_a_server_stopped_in_the_middle_of_a_wait_exits_0(mark: str) -> None:
    # Before: the SIGTERM handler set the event itself, and hung on the lock that the
    # interrupted `stopped.wait()` held (15 times in 20 here).
    spec = {
        "cluster": {"workerpool0": ["127.0.0.1:1"], "workerpool2": ["127.0.0.1:2"]},
        "task": {"type": "workerpool2", "index": 0},
    }
    env = {**os.environ, MARK: mark, "CLUSTER_SPEC": json.dumps(spec)}
    servers = [
        subprocess.Popen(
            [sys.executable, SERVING, "--busy"], env=env, stderr=subprocess.PIPE, text=True
        )
        for _ in range(8)
    ]
    try:
        for server in servers:
            assert server.stderr is not None  # vtrain's log lines
            assert "serves serving until the job ends" in server.stderr.readline()
            server.send_signal(signal.SIGTERM)
        assert [server.wait(timeout=60) for server in servers] == [0] * len(servers)
    finally:
        for server in servers:
            if server.poll() is None:
                server.kill()
                server.wait()


def test_a_temporary_folder_that_cannot_hold_the_jobs_is_named(
    vtrain: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-folder"
    done = vtrain("--", sys.executable, "-c", "pass", TMPDIR=str(missing))
    assert done.returncode == 2, done.stdout + done.stderr
    assert re.search(
        r"TMPDIR: cannot create the job's private folder \(No such file or directory\) "
        rf"\(got '{re.escape(str(missing))}'\); expected a folder this user can create",
        done.stderr,
    ), done.stderr


def test_a_replica_that_cannot_say_it_serves_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "gone" / "ps-0.serves"
    serve.announce({SERVES_FILE: str(missing)})
    (said,) = caplog.messages
    assert said.startswith(f"vtrain: cannot say that this replica serves ({SERVES_FILE}): ")
    assert "No such file or directory" in said
    caplog.clear()
    serve.announce({})  # outside `vtrain local run`: nothing to say
    assert caplog.messages == []


def test_the_private_folder_is_removed_with_what_replicas_left() -> None:
    files = ServingFiles.create()
    assert os.stat(files.folder).st_mode & 0o777 == 0o700
    serve.announce({SERVES_FILE: files.path("ps-0")})
    assert files.serves("ps-0") and not files.serves("ps-1")
    files.forget("ps-0")
    assert not files.serves("ps-0")
    serve.announce({SERVES_FILE: files.path("ps-0")})
    files.remove()
    assert not os.path.exists(files.folder)
