"""A relative AIP_TRAINING_DATA_URI resumes exactly in a rehearsal, each replica on its own disk:
3 trainers stop, 2 go on, and a lone chief killed and restarted goes on (issue 41)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TRAINER = str(Path(__file__).parent / "position_trainer.py")


def project(tmp_path: Path) -> tuple[Path, list[int]]:
    """A project folder holding data/ (6 files of 10 records, ids 0-59); every id."""
    data = tmp_path / "project" / "data"
    data.mkdir(parents=True)
    for f in range(6):
        ids = range(f * 10, (f + 1) * 10)
        text = "".join(json.dumps({"id": i}) + "\n" for i in ids)
        (data / f"training-{f:02d}.jsonl").write_text(text)
    (tmp_path / "results").mkdir()
    return tmp_path / "project", list(range(60))


def rehearse(tmp_path: Path, out: str, options: list[str], *args: str) -> str:
    """`vtrain local run OPTIONS -- python position_trainer.py ARGS` in the project, its output
    in `tmp_path/out`, with the relative data URI every README example writes; what it said."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TF_CONFIG", "CLUSTER_SPEC") and not k.startswith("AIP_")
    }
    done = subprocess.run(
        [sys.executable, "-m", "vtrain", "local", "run", "--output-dir", str(tmp_path / out)]
        + options
        + ["--", sys.executable, TRAINER, *args],
        cwd=tmp_path / "project",
        env={
            **env,
            "AIP_TRAINING_DATA_URI": "data/*.jsonl",
            "RESULTS": str(tmp_path / "results"),
            "NO_COLOR": "1",
        },
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def steps(tmp_path: Path, job: str) -> list[dict[str, Any]]:
    found = []
    for path in sorted((tmp_path / "results").glob(f"{job}-rank-*.jsonl")):
        found += [json.loads(line) for line in path.read_text().splitlines()]
    return found


def test_three_trainers_stop_and_two_go_on_each_record_once(tmp_path: Path) -> None:
    folder, every = project(tmp_path)
    rehearse(tmp_path, "a", ["--workers", "2"], "--job", "a", "--stop-after", "4")
    resume = str(tmp_path / "a" / "checkpoints")
    rehearse(tmp_path, "b", ["--workers", "1"], "--job", "b", "--resume-from", resume)
    first, then = steps(tmp_path, "a"), steps(tmp_path, "b")
    # Each replica had its own disk, and the resume its own again: positions hold across them.
    where = {s["cwd"] for s in first}
    assert len(where) == 3 and all(str(folder) not in w for w in where)
    assert not where & {s["cwd"] for s in then}
    assert {s["step"] for s in first} == {1, 2, 3, 4} and min(s["step"] for s in then) == 5
    trained = [i for s in first + then for i in s["ids"]]
    assert sorted(trained) == every  # each record of the epoch exactly once
    assert not (tmp_path / "results" / "b-rank-2.jsonl").exists()


def test_a_lone_chief_killed_and_restarted_goes_on_each_record_once(tmp_path: Path) -> None:
    _, every = project(tmp_path)
    output = rehearse(
        tmp_path, "c", ["--workers", "0", "--max-restarts", "1"], "--job", "c", "--die-after", "5"
    )
    assert "chief-0" in output
    seen = steps(tmp_path, "c")
    runs = sorted({s["cwd"] for s in seen})
    assert len(runs) == 2  # a restart is a new machine: another working folder
    assert [s["step"] for s in seen] == list(range(1, len(seen) + 1))
    assert sorted(i for s in seen for i in s["ids"]) == every
