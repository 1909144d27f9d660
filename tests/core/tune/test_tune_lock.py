"""One study per folder: a second `vtrain tune`, or a job, in a running study's folder stops."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tune_helpers import OBJECTIVE, study

from vtrain.local.folder_lock import LOCK_FILE


def _tune(tmp_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "vtrain",
        "tune",
        "--study",
        "study.json",
        "--output-dir",
        "out",
        "--",
        sys.executable,
        OBJECTIVE,
        "--records",
        "records",
        *extra,
    ]


def test_a_second_study_or_job_in_a_running_study_s_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "study.json").write_text(json.dumps(study(max_trial_count=1)))
    (tmp_path / "records").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "VTRAIN_OUTPUT_DIR"}
    go = tmp_path / "go"
    first = subprocess.Popen(
        _tune(tmp_path, "--wait-for", str(go)),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not any((tmp_path / "records").glob("started-*")):
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first study's trial never started"
            time.sleep(0.05)
        for second in (
            _tune(tmp_path),
            [sys.executable, "-m", "vtrain", "local", "run", "--output-dir", "out", "--"]
            + [sys.executable, "-c", "print('a job')"],
        ):
            done = subprocess.run(
                second, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
            )
            said = (done.stdout + done.stderr).strip().splitlines()
            assert done.returncode != 0 and len(said) == 1, said
            assert f"study study.json (pid {first.pid}, started " in said[0]
            assert "is running in this folder" in said[0]
    finally:
        go.touch()
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0, out + err
    results = json.loads((tmp_path / "out" / "study.json").read_text())
    assert [t["status"] for t in results["trials"]] == ["SUCCEEDED"]
    assert (tmp_path / "out" / LOCK_FILE).read_text() == ""  # released at the study's end


def test_a_new_study_moves_the_old_one_aside_and_holds_its_folder(tmp_path: Path) -> None:
    (tmp_path / "study.json").write_text(json.dumps(study(max_trial_count=1)))
    (tmp_path / "records").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "VTRAIN_OUTPUT_DIR"}
    for options in ((), ("--new-study",)):
        argv = _tune(tmp_path)
        at = argv.index("--output-dir")
        argv[at:at] = options
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "the earlier one is kept in" in done.stderr
    assert (tmp_path / "out.1" / "study.json").exists() and (
        tmp_path / "out" / "study.json"
    ).exists()
    assert (tmp_path / "out" / LOCK_FILE).read_text() == ""
