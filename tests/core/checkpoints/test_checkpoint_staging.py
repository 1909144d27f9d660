"""A process killed during a gs:// save leaves a local staging copy; the next start removes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vtrain.storage.owner import Owner, me, running, start_time
from vtrain.storage.staging import remove_stale_staging, staging_prefix

SAVER = """
    import json, sys, time
    from pathlib import Path
    from vtrain.checkpoints import CheckpointManager, Snapshot

    def write(folder):
        Path(folder, "model.bin").write_bytes(b"m" * 200_000)
        print("writing", flush=True)
        time.sleep(60)  # killed here

    uri, options, kind = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    m = CheckpointManager(uri, is_leader=True, **options)
    if kind == "snapshot":  # runs on the save's thread, into a `vtrain-save-` folder
        m.save(1, Snapshot(write), blocking=False)
        time.sleep(60)
    else:  # a plain callable runs in the call, into a `vtrain-stage-` folder
        m.save(1, write, blocking=False)
"""

STARTER = """
    import json, sys
    from vtrain.checkpoints import CheckpointManager
    m = CheckpointManager(sys.argv[1], is_leader=True, **json.loads(sys.argv[2]))
    m.cleanup()
"""


def _python(code: str, *args: str, tmpdir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, TMPDIR=str(tmpdir)),
    )


@pytest.mark.parametrize(
    ("kind", "prefix"), [("snapshot", "vtrain-save-"), ("plain", "vtrain-stage-")]
)
def test_a_killed_gs_save_leaves_staging_that_the_next_start_removes(
    gcs_emulator, tmp_path: Path, kind: str, prefix: str
) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    uri = f"gs://{gcs_emulator.new_bucket()}/ckpt"
    options = json.dumps({"environ": gcs_emulator.environ, "gcs_mount": str(tmp_path / "none")})
    # A staging folder of a process that still runs (this one) must survive the cleanup.
    alive = tmpdir / (staging_prefix("stage") + "alive")
    alive.mkdir()
    saver = _python(SAVER, uri, options, kind, tmpdir=tmpdir)
    assert saver.stdout is not None and saver.stdout.readline() == "writing\n"
    saver.send_signal(signal.SIGKILL)
    saver.wait(timeout=30)
    left = [p for p in os.listdir(tmpdir) if p.startswith(prefix) and p != alive.name]
    assert len(left) == 1 and left[0].startswith(f"{prefix}{saver.pid}.")
    assert (tmpdir / left[0] / "model.bin").stat().st_size == 200_000

    starter = _python(STARTER, uri, options, tmpdir=tmpdir)
    _, err = starter.communicate(timeout=60)
    assert starter.returncode == 0, err
    assert sorted(os.listdir(tmpdir)) == [alive.name]


def test_only_folders_of_processes_that_are_gone_are_removed(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    gone = tmp_path / f"vtrain-restore-{child.pid}.1-x"  # the pid ended (or was given away)
    reused = tmp_path / f"vtrain-save-{os.getpid()}.{(me().start or 0) + 1}-x"  # our pid, earlier
    mine = tmp_path / (staging_prefix("save") + "x")
    other = tmp_path / "vtrain-save-not-ours"  # not a staging name: never touched
    for folder in (gone, reused, mine, other):
        (folder / "sub").mkdir(parents=True)
    removed = remove_stale_staging(str(tmp_path))
    assert sorted(removed) == sorted([str(gone), str(reused)])
    assert sorted(os.listdir(tmp_path)) == sorted([mine.name, other.name])


def test_running_tells_a_live_process_from_a_gone_one() -> None:
    here = me()
    assert running(here) is True
    assert running(Owner(here.pid, here.host, (here.start or 0) + 1, here.boot)) is False
    assert running(Owner(here.pid, here.host, here.start, "another-boot")) is False
    assert running(Owner(1, "some-other-host")) is None
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        started = start_time(child.pid)
        assert started is not None
        assert running(Owner(child.pid, here.host, started, here.boot)) is True
    finally:
        child.kill()
        child.wait()
    assert running(Owner(child.pid, here.host, started, here.boot)) is False
