"""Issue 41: `save_checkpoint(..., data=stream)` with the relative AIP_TRAINING_DATA_URI the
README writes: a DDP job on 3 processes, each on its own disk, killed, resumes on 2 exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from cluster_run import clean_env

SCRIPT = str(Path(__file__).parent / "scripts" / "stream_resume.py")


def write_split(folder: Path, files: int, records: int) -> list[int]:
    """`files` JSON Lines files of `records` records each, ids 0, 1, ...; every id."""
    folder.mkdir(parents=True)
    for f in range(files):
        ids = range(f * records, (f + 1) * records)
        text = "".join(json.dumps({"id": i}) + "\n" for i in ids)
        (folder / f"training-{f}.jsonl").write_text(text)
    return list(range(files * records))


def rehearse(project: Path, out: Path, options: list[str], *args: str, **env: str) -> str:
    """`vtrain local run` of stream_resume.py in `project`, its data URI `data/*.jsonl`."""
    done = subprocess.run(
        [sys.executable, "-m", "vtrain", "local", "run", "--output-dir", str(out), *options]
        + ["--", sys.executable, SCRIPT, *args],
        cwd=project,
        env=clean_env(AIP_TRAINING_DATA_URI="data/*.jsonl", **env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return f"{done.returncode}\n{done.stdout}{done.stderr}"


def test_a_relative_uri_killed_on_3_processes_resumes_on_2_each_record_once(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    every = write_split(project / "data", 6, 50)
    results = tmp_path / "r"
    results.mkdir()
    out = tmp_path / "out"
    options = ["--workers", "2", "--max-restarts", "0"]
    first = rehearse(project, out, options, "--run", "1", "--die-after", "10", RESULTS=str(results))
    assert "differ in 'listing'" not in first and "chief-0 exited with SIGKILL" in first, first
    second = rehearse(project, out, ["--workers", "1"], "--run", "2", RESULTS=str(results))
    assert second.startswith("0\n"), second
    log = (out / "replica-logs" / "chief-0.log").read_text()
    assert "resumed step 9 from 3 workers on 2; " in log

    def steps(run: str, rank: int) -> list[dict[str, Any]]:
        lines = (results / f"ids-{run}-rank-{rank}.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    before = [s for r in range(3) for s in steps("1", r) if s["step"] <= 9]
    after = [s for r in range(2) for s in steps("2", r)]
    assert min(s["step"] for s in after) == 10
    assert sorted(i for s in before + after for i in s["ids"]) == every
