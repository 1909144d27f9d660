"""The watcher sees a run's writes and reads whatever makes them: Python, native code, renames,
subprocesses that are gone before it reads; and says why where the kernel refuses it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from vtrain.local.evidence import Run
from vtrain.local.watch import NOT_SEEN, Watcher

ROOT = os.geteuid() == 0


def _watcher(folder: Path) -> Watcher:
    # This test process stands in for the keeper: the processes it starts are the runs.
    found = Watcher.start([str(folder)], os.getpid())
    if isinstance(found, str):
        pytest.fail(f"the watcher is refused on a root machine: {found}")
    return found


WRITER = textwrap.dedent(
    """
    import os, subprocess, sys
    import numpy as np
    folder = sys.argv[1]
    np.save(os.path.join(folder, "native.npy"), np.zeros(4))        # native code
    subprocess.run(["sh", "-c", f"echo w > {folder}/shell.txt"], check=True)  # a subprocess
    with open(os.path.join(folder, "tmp-1"), "w") as f:
        f.write("x")
    os.replace(os.path.join(folder, "tmp-1"), os.path.join(folder, "renamed.bin"))  # a rename
    open(os.path.join(folder, "input.txt")).read()                  # a read
    """
)


@pytest.mark.skipif(not ROOT, reason="fanotify needs root; the refusal has its own test")
def test_every_kind_of_write_is_the_runs_that_made_it(tmp_path: Path) -> None:
    (tmp_path / "input.txt").write_text("in")
    watcher = _watcher(tmp_path)
    run = Run("chief-0", 0, None, str(tmp_path / "record"), None)
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)])
    proc.wait(60)
    # Heard of only now, after it ended: what it did waited for it.
    watcher.started(proc.pid, run)
    assert watcher.stop() == []
    seen = set(run.seen)
    for name in ("native.npy", "shell.txt", "renamed.bin"):
        assert ("write", str(tmp_path / name)) in seen, run.seen
    assert ("read", str(tmp_path / "input.txt")) in seen
    assert ("write", str(tmp_path / "input.txt")) not in seen


@pytest.mark.skipif(not ROOT, reason="fanotify needs root; the refusal has its own test")
def test_what_others_do_is_no_runs(tmp_path: Path) -> None:
    watcher = _watcher(tmp_path)
    run = Run("chief-0", 0, None, str(tmp_path / "record"), None)
    ours = subprocess.Popen([sys.executable, "-c", "pass"])
    watcher.started(ours.pid, run)
    ours.wait(60)
    # Written by this process (vtrain itself) and by a process that is not a run's.
    (tmp_path / "by-vtrain.txt").write_text("v")
    stranger = subprocess.Popen(["sh", "-c", f"echo s > {tmp_path}/by-stranger.txt"])
    stranger.wait(60)
    time.sleep(0.2)
    watcher.stop()
    assert not [path for _, path in run.seen if path.startswith(str(tmp_path))]


def _as_nobody(tmp: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """This interpreter run as the user nobody, in `tmp` (which it can write)."""
    env = dict(os.environ, HOME=tmp, TMPDIR=tmp)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(__file__).parents[3] / "core"), env.get("PYTHONPATH")) if p
    )
    os.chmod(tmp, 0o777)
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]
    return subprocess.run(
        [*nobody, *argv], capture_output=True, text=True, env=env, timeout=120, cwd=tmp
    )


@pytest.mark.skipif(not ROOT, reason="needs root to become another user")
def test_a_machine_that_refuses_it_says_why() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        done = _as_nobody(
            tmp, "-c", "from vtrain.local.watch import Watcher; print(Watcher.start(['/tmp'], 1))"
        )
    assert done.returncode == 0, done.stderr
    assert "need" in done.stdout and "root" in done.stdout, done.stdout


@pytest.mark.skipif(not ROOT, reason="needs root to become another user")
def test_a_rehearsal_without_it_says_what_it_did_not_check() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        verdict = Path(tmp) / "verdict.json"
        # Python's own folders here are root's: the job is a shell's.
        job = ["sh", "-c", 'echo m > "$AIP_MODEL_DIR/model.txt"']
        done = _as_nobody(
            tmp,
            "-m",
            "vtrain",
            "local",
            "run",
            "--output-dir",
            f"{tmp}/out",
            "--verdict-json",
            str(verdict),
            "--",
            *job,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        found = json.loads(verdict.read_text())
    assert any(line.startswith(NOT_SEEN) for line in found["not_checked"]), found
    assert "not checked: " + NOT_SEEN in done.stdout
