"""A trainer's timeline file on a platform: beside the checkpoints, an attempt per process.

Each case is a real process (the recorder is a process's own, and records its exit).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from vtrain.timeline.events import parse

SCRIPT = (
    "import sys\n"
    "from vtrain.timeline import recorder\n"
    "from vtrain.timeline.recorder import start_recording\n"
    "env = dict(a.split('=', 1) for a in sys.argv[3:])\n"
    "start_recording(env, 'worker-1', sys.argv[1], launched=sys.argv[2] == 'launched')\n"
    "recorder().record('step', step=3)\n"
)


def _run(checkpoints: Path, how: str, *env: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(checkpoints), how, *env],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_each_process_of_a_replica_is_its_next_attempt(tmp_path: Path) -> None:
    checkpoints = tmp_path / "job" / "checkpoints"
    _run(checkpoints, "launched")
    _run(checkpoints, "launched")
    folder = tmp_path / "job" / "timeline"
    assert sorted(p.name for p in folder.iterdir()) == ["worker-1.1.jsonl", "worker-1.2.jsonl"]
    records = parse((folder / "worker-1.2.jsonl").read_bytes().splitlines())
    assert [r["e"] for r in records] == ["start", "step", "exit"]
    assert records[0]["t"] <= records[1]["t"]  # the process's own start, from the kernel


def test_alone_or_switched_off_nothing_is_recorded(tmp_path: Path) -> None:
    checkpoints = tmp_path / "job" / "checkpoints"
    _run(checkpoints, "alone")
    _run(checkpoints, "launched", "VTRAIN_TIMELINE=off")
    assert not (tmp_path / "job" / "timeline").exists()


def test_a_file_named_for_the_process_is_used_even_alone(tmp_path: Path) -> None:
    named = tmp_path / "mine.jsonl"
    _run(tmp_path / "checkpoints", "alone", f"VTRAIN_TIMELINE_FILE={named}")
    assert [r["e"] for r in parse(named.read_bytes().splitlines())] == ["start", "step", "exit"]


def test_without_a_checkpoint_folder_nothing_lands_in_the_working_folder(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("sys.argv[1]", "''"), "-", "launched"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []
