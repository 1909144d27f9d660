"""One job per output folder: a second job is refused in one line; a dead job's lock is taken."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from local_procs import VTRAIN, marked

from vtrain.errors import LaunchError
from vtrain.local.folder_lock import (
    GONE,
    LIVE,
    LOCK_FILE,
    REUSED,
    UNKNOWN,
    FolderLock,
    fate,
    holder,
    takeover_line,
)
from vtrain.process_start import start_time

Run = Callable[..., subprocess.CompletedProcess[str]]

# The first job's chief says it has started, then waits for the test's word to finish.
WAITER = """\
import os, sys, time
from pathlib import Path
folder = Path(sys.argv[1])
(folder / f"{os.getpid()}.tmp").write_text(os.getcwd())
os.replace(folder / f"{os.getpid()}.tmp", folder / "started")
deadline = time.monotonic() + 60
while not (folder / "go").exists() and time.monotonic() < deadline:
    time.sleep(0.05)
assert os.path.isdir(os.getcwd()), "its working folder was taken from it"
print("first job done")
"""

# A process that holds a folder's lock until it is killed: a job, as far as the lock goes.
HOLDER = """\
import sys, time
from vtrain.local.folder_lock import FolderLock
lock = FolderLock.take(sys.argv[1], "the-holder")
print("held", flush=True)
time.sleep(120)
"""


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _holding(folder: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def _lock_holders(lock: Path, pids: list[int]) -> list[int]:
    """Those of `pids` with a descriptor open on `lock`."""
    found = []
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == str(lock):
                    found.append(pid)
            except OSError:
                continue
    return found


def test_a_second_job_in_the_folder_is_refused_in_one_line_and_the_first_is_unharmed(
    vtrain: Run, tmp_path: Path, env: dict[str, str], mark: str
) -> None:
    script = tmp_path / "waiter.py"
    script.write_text(WAITER)
    out = tmp_path / "o"
    first = subprocess.Popen(
        [*VTRAIN, "--output-dir", str(out), "--workers", "1", "--job-id", "first-job", "--"]
        + [sys.executable, str(script), str(tmp_path)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(tmp_path / "started", first)
        disks_before = sorted(p.name for p in (out / "disks").iterdir())
        # Only vtrain holds the lock: not its keeper, nor a replica, whose life could outlast it.
        lock = out / LOCK_FILE
        assert _lock_holders(lock, marked(mark)) == [first.pid]
        second = vtrain("--output-dir", str(out), "--", sys.executable, "-c", "print('second')")
        assert second.returncode != 0
        said = (second.stdout + second.stderr).strip().splitlines()
        assert len(said) == 1, said
        assert f"job first-job (pid {first.pid}, started " in said[0]
        assert "is running in this folder" in said[0] and str(out) in said[0]
        assert "second" not in second.stdout
        assert sorted(p.name for p in (out / "disks").iterdir()) == disks_before
    finally:
        (tmp_path / "go").touch()
        stdout, stderr = first.communicate(timeout=60)
    assert first.returncode == 0, stdout + stderr
    assert "first job done" in stdout and "restart 1" not in stdout
    assert json.loads(lock.read_text() or "null") is None  # released: nobody holds it
    log = (out / "replica-logs" / "chief-0.log").read_text()
    assert "first job done" in log and "second" not in log


def test_a_killed_job_s_lock_is_taken_over_and_the_takeover_says_whose_it_was(
    vtrain: Run, tmp_path: Path, env: dict[str, str]
) -> None:
    out = tmp_path / "o"
    dead = _holding(out, env)
    dead.send_signal(signal.SIGKILL)
    dead.wait()
    done = vtrain("--output-dir", str(out), "--", sys.executable, "-c", "print('ran')")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        f"took over the lock of {out} from job the-holder (pid {dead.pid}, started "
        in done.stdout + done.stderr
    )
    assert "that process has ended" in done.stdout + done.stderr


@pytest.fixture
def held(tmp_path: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    proc = _holding(tmp_path / "live", env)
    yield proc
    proc.kill()
    proc.wait()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _body(pid: int, start: int | None) -> str:
    return json.dumps({"pid": pid, "start": start, "started": "then", "job_id": "old"})


# Every state a lock file can be in: what it holds, whether another job is running there,
# and the takeover line's reason (None: nothing to say).
STATES: list[tuple[str, Callable[[], str | None], bool, str | None]] = [
    ("missing", lambda: None, False, None),
    ("empty", lambda: "", False, None),
    ("garbage", lambda: "{not json", False, None),
    ("a list", lambda: "[1, 2]", False, None),
    ("a dead pid", lambda: _body(_dead_pid(), 1), False, "that process has ended"),
    ("a reused pid", lambda: _body(os.getppid(), 1), False, "is another process now"),
    ("no start", lambda: _body(os.getppid(), None), False, "it no longer holds it"),
    # A live job whose lock file was replaced under it: it runs, so it is not taken over.
    ("live, unlocked", lambda: _body(os.getppid(), start_time(os.getppid())), True, None),
]


@pytest.mark.parametrize(("state", "body", "refused", "why"), STATES, ids=[s[0] for s in STATES])
def test_every_lock_file_state(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    state: str,
    body: Callable[[], str | None],
    refused: bool,
    why: str | None,
) -> None:
    folder = tmp_path / "o"
    folder.mkdir()
    text = body()
    if text is not None:
        (folder / LOCK_FILE).write_text(text)
    caplog.set_level(logging.INFO, logger="vtrain")
    if refused:
        with pytest.raises(LaunchError, match=r"job old \(pid \d+, started then\) is running"):
            FolderLock.take(str(folder), "new")
        return
    with FolderLock.take(str(folder), "new"):
        written = json.loads((folder / LOCK_FILE).read_text())
        assert written["pid"] == os.getpid() and written["job_id"] == "new"
        assert written["start"] == start_time(os.getpid())
        with pytest.raises(LaunchError, match=r"job new \(pid \d+, started .*\) is running"):
            FolderLock.take(str(folder), "third")  # held: even this process is refused
    said = [r.getMessage() for r in caplog.records if "took over" in r.getMessage()]
    if why is None:
        assert said == []
    else:
        assert len(said) == 1 and why in said[0] and "job old (pid " in said[0]
    assert (folder / LOCK_FILE).read_text() == ""


def test_a_lock_held_by_a_live_process_is_refused(
    held: subprocess.Popen[str], tmp_path: Path
) -> None:
    with pytest.raises(LaunchError) as e:
        FolderLock.take(str(tmp_path / "live"), "new")
    assert f"--output-dir: job the-holder (pid {held.pid}, started " in str(e.value)
    assert str(e.value).count("\n") == 0


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=300))
def test_whatever_a_lock_file_holds_nobody_s_lock_is_taken(
    tmp_path_factory: pytest.TempPathFactory, body: bytes
) -> None:
    folder = tmp_path_factory.mktemp("o")
    (folder / LOCK_FILE).write_bytes(body)
    try:
        lock = FolderLock.take(str(folder), "new")
    except LaunchError as e:
        # Refused only for a body naming a live process at its own start.
        named = holder(body.decode("utf-8", "replace"))
        assert named is not None and fate(named, start_time) == LIVE, e
        return
    lock.release()


@pytest.mark.parametrize(
    ("named", "now", "expected"),
    [
        ({"pid": 7, "start": 100}, None, GONE),
        ({"pid": 7, "start": 100}, 100, LIVE),
        ({"pid": 7, "start": 100}, 250, REUSED),
        ({"pid": 7}, 250, UNKNOWN),
        ({"pid": 7, "start": "100"}, 100, UNKNOWN),
    ],
)
def test_what_a_lock_s_pid_names_now(
    named: dict[str, object], now: int | None, expected: str
) -> None:
    assert fate(named, lambda pid: now) == expected


def test_a_takeover_line_names_the_job_and_why() -> None:
    named = {"pid": 7, "start": 1, "started": "2026-01-02 03:04:05", "job_id": "j", "what": "study"}
    assert takeover_line("/o", named, REUSED) == (
        "vtrain: took over the lock of /o from study j (pid 7, started 2026-01-02 03:04:05): "
        "it has ended; pid 7 is another process now"
    )
    assert takeover_line("/o", None, UNKNOWN) is None
    assert holder('{"pid": true}') is None and holder('{"pid": -1}') is None
