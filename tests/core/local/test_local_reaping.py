"""Nothing outlives a local job, and a full disk does not end it: real processes, real limits.

A replica's daemon (double fork, setsid) is stopped with the job; `kill -9` of
vtrain takes every replica and daemon with it; a replica log that hits
RLIMIT_FSIZE is reported once and the job goes on to its end and its cleanup.
A SIGKILL of any two of vtrain, the keeper's guard and the keeper, at once,
leaves nothing of the job, 20 times in a row; the keeper and its guard say what
they are in `ps`, and `pkill -f "vtrain local"` does not find them.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from local_procs import VTRAIN, alive, marked

ESCAPER = str(Path(__file__).parent / "replicas" / "escaper.py")
Run = Callable[..., subprocess.CompletedProcess[str]]
pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="subreapers and PDEATHSIG are Linux's"
)


def escaped(out: Path) -> list[int]:
    """The pids of the daemons the replicas left."""
    folder = out / "escaped"
    return [int(p.name) for p in folder.iterdir()] if folder.exists() else []


def wait_for(condition: Callable[[], object], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_daemon_a_replica_leaves_is_stopped_with_the_job(vtrain: Run, tmp_path: Path) -> None:
    out = tmp_path / "rec"
    done = vtrain("--workers", "1", "--", sys.executable, ESCAPER, str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    daemons = escaped(out)
    assert len(daemons) == 2
    for pid in daemons:  # before: each sleeps on, in a session of its own, re-parented to init
        assert not alive(pid), f"daemon {pid} outlived the job"


def test_kill_9_of_vtrain_takes_every_replica_and_daemon_with_it(
    env: dict[str, str], mark: str, tmp_path: Path
) -> None:
    out = tmp_path / "rec"
    command = [*VTRAIN, "--workers", "2", "--", sys.executable, ESCAPER, str(out), "--sleep", "600"]
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL)
    try:
        wait_for(lambda: len(escaped(out)) == 3)
    finally:
        proc.kill()
        proc.wait()
    # Before: the replicas, orphaned, went on sleeping (and so did their daemons).
    wait_for(lambda: not marked(mark), seconds=10)


def test_kill_9_of_vtrain_leaves_no_private_folder(
    env: dict[str, str], mark: str, tmp_path: Path
) -> None:
    out, private = tmp_path / "rec", tmp_path / "tmp"
    private.mkdir()
    command = [*VTRAIN, "--ps", "1", "--", sys.executable, ESCAPER, str(out), "--sleep", "600"]
    proc = subprocess.Popen(
        command, cwd=tmp_path, env={**env, "TMPDIR": str(private)}, stdout=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: len(escaped(out)) == 2)
        assert [p.name[:11] for p in private.iterdir()] == ["vtrain-job-"]
    finally:
        proc.kill()
        proc.wait()
    wait_for(lambda: not marked(mark), seconds=10)
    assert list(private.iterdir()) == []  # the keeper removed the job's folder as it ended


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def _command_line(pid: int) -> bytes:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read()


def _titled(root: int, title: bytes) -> int:
    """The one process under `root` whose command line starts with `title`."""
    found, todo = [], [root]
    while todo:
        for pid in _children(todo.pop()):
            todo.append(pid)
            if _command_line(pid).startswith(title):
                found.append(pid)
    [pid] = found
    return pid


def _start_sleeping_job(
    env: dict[str, str], tmp_path: Path, name: str
) -> tuple[Path, subprocess.Popen[bytes]]:
    """A job of two replicas that sleep; each has a child, which left a daemon; all started."""
    out = tmp_path / f"{name}-rec"
    # The replica's first process is `sleep`; the escaper is its child and forks the daemon.
    replica = f'"{sys.executable}" "{ESCAPER}" "{out}" --sleep 600 & exec sleep 600'
    command = [
        *VTRAIN,
        "--workers",
        "1",
        "--output-dir",
        str(tmp_path / name),
        "--",
        "sh",
        "-c",
        replica,
    ]
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL)
    try:
        wait_for(lambda: len(escaped(out)) == 2)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return out, proc


def test_the_keeper_and_its_guard_say_what_they_are(
    env: dict[str, str], mark: str, tmp_path: Path
) -> None:
    _, proc = _start_sleeping_job(env, tmp_path, "titled")
    try:
        guard = _titled(proc.pid, b"keeper's guard of titled\0")
        keeper = _titled(proc.pid, b"vtrain keeper of titled\0")
        assert guard in _children(proc.pid) and keeper in _children(guard)
        for pid, name in ((guard, b"keeper's guard\n"), (keeper, b"vtrain keeper\n")):
            with open(f"/proc/{pid}/comm", "rb") as f:
                assert f.read() == name
            # What `pkill -f "vtrain local"` matches: the command line, NULs read as spaces.
            assert b"vtrain local" not in _command_line(pid).replace(b"\0", b" ")
        assert b"vtrain\0local" in _command_line(proc.pid)  # vtrain itself: found, as before
        # `pkill -9 -f vtrain` spares the guard, which then stops the rest.
        assert b"vtrain" not in _command_line(guard)
    finally:
        proc.kill()
        proc.wait()
    wait_for(lambda: not marked(mark), seconds=10)


def test_sigkill_of_vtrain_and_its_keeper_together_leaves_nothing_20_times(
    env: dict[str, str], mark: str, tmp_path: Path
) -> None:
    for n in range(20):
        _, proc = _start_sleeping_job(env, tmp_path, f"job-{n}")
        try:
            keeper = _titled(proc.pid, b"vtrain keeper of ")
            first, second = (proc.pid, keeper) if n % 2 else (keeper, proc.pid)
            os.kill(first, signal.SIGKILL)  # as `pkill -9 -f` does, one after the other
            os.kill(second, signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
        # Before: both replicas, their children and their daemons slept on, under init.
        wait_for(lambda: not marked(mark), seconds=10)


@pytest.mark.parametrize("pair", [("vtrain", "guard"), ("guard", "keeper")])
def test_sigkill_of_any_two_of_vtrain_the_guard_and_the_keeper_leaves_nothing(
    env: dict[str, str], mark: str, tmp_path: Path, pair: tuple[str, str]
) -> None:
    _, proc = _start_sleeping_job(env, tmp_path, "job")
    try:
        pids = {
            "vtrain": proc.pid,
            "guard": _titled(proc.pid, b"keeper's guard of "),
            "keeper": _titled(proc.pid, b"vtrain keeper of "),
        }
        for name in pair:
            os.kill(pids[name], signal.SIGKILL)
        if "vtrain" not in pair:  # vtrain sees its keeper gone, fails the job and stops all
            assert proc.wait(timeout=60) == 1
    finally:
        proc.kill()
        proc.wait()
    wait_for(lambda: not marked(mark), seconds=10)


def test_a_killed_keeper_fails_the_job_and_takes_everything_with_it(
    env: dict[str, str], mark: str, tmp_path: Path
) -> None:
    out = tmp_path / "rec"
    command = [*VTRAIN, "--workers", "2", "--", sys.executable, ESCAPER, str(out), "--sleep", "600"]
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for(lambda: len(escaped(out)) == 3)
        keeper = _titled(proc.pid, b"vtrain keeper of ")
        os.kill(keeper, signal.SIGKILL)
        shown, errors = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, shown + errors
    assert "Traceback" not in errors, errors
    assert f"vtrain's keeper process (pid {keeper}) ended unexpectedly" in shown
    assert "; killing every replica" in shown
    wait_for(lambda: not marked(mark), seconds=10)


def test_a_log_over_the_file_size_limit_is_reported_once_and_the_job_goes_on(
    env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "rec"
    limit = 100 * 1024  # `ulimit -f 100`

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        [*VTRAIN, "--workers", "1", "--", sys.executable, ESCAPER, str(out), "--lines", "3000"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )
    # Before: three chained OSError tracebacks, every replica killed, exit status 1.
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("chief-0", "worker-0"):
        reports = [line for line in done.stdout.splitlines() if f"{name}.log (EFBIG" in line]
        assert len(reports) == 1, done.stdout[-2000:]
        assert "File too large" in reports[0]
        # Still shown after the log gave up: the replica's last line and the summary.
        assert f"{name} | started" in done.stdout.replace(f"{name}  |", f"{name} |")
    assert "job succeeded (exit status 0)" in done.stdout
    log = next((tmp_path / "vtrain-output" / "local").glob("*/replica-logs/chief-0.log"))
    assert log.stat().st_size <= limit
    for pid in escaped(out):  # and the cleanup ran
        assert not alive(pid)


def test_reaping_stops_only_what_was_started_inside(tmp_path: Path) -> None:
    from vtrain.local.reaper import descendants, reaping

    sleep = [sys.executable, "-c", "import time; time.sleep(600)"]
    before = subprocess.Popen(sleep)
    try:
        with reaping():
            subprocess.run([sys.executable, ESCAPER, str(tmp_path)], check=True)
            [daemon] = escaped(tmp_path)
            assert daemon in descendants()  # it came back to us, not to init
        assert not alive(daemon)
        assert before.poll() is None  # ours from before: left alone
    finally:
        before.kill()
        before.wait()
