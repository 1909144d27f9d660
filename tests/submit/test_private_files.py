"""Every file vtrain writes that holds a command line or an environment is this user's only.

Run as a person runs vtrain, under the usual umask 022 (which leaves a plain file
world-readable): the documents of `-o` (render and submit, every engine, YAML and
JSON, a file already there at 0644 included), and tune's study.json, which records
the command with its --password.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

PASSWORD = "Zq-hunter2"
CMD = ["--", "python", "t.py", f"--password={PASSWORD}"]
JOB = ["--name", "p", "--image", "gcr.io/p/t:1"]
VERTEX = [*JOB, "--env", f"DB=postgres://u:{PASSWORD}@db/x"]
VTRAIN = [sys.executable, "-m", "vtrain"]

# name -> (vtrain's arguments, given the file to write; the file they write there).
WRITERS = {
    "render vertex yaml": lambda f: ["render", "vertex", *VERTEX, "-o", f, *CMD],
    "render vertex json": lambda f: [
        "render",
        "vertex",
        *VERTEX,
        "--format",
        "json",
        "-o",
        f,
        *CMD,
    ],
    "submit vertex dry run": lambda f: ["submit", "vertex", "--dry-run", *VERTEX, "-o", f, *CMD],
    "render aiplatform": lambda f: ["render", "aiplatform", *JOB, "-o", f, *CMD],
    "render kubeflow": lambda f: [
        "render",
        "kubeflow",
        "--framework",
        "pytorch",
        "--workers",
        "1",
        *VERTEX,
        "-o",
        f,
        *CMD,
    ],
}


def _vtrain(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*VTRAIN, *args], cwd=cwd, umask=0o022, capture_output=True, text=True, check=False
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_an_output_document_is_private_even_over_a_readable_file(name: str, tmp_path: Path) -> None:
    new, old = tmp_path / "new.yaml", tmp_path / "old.yaml"
    old.write_text("an older job\n")
    old.chmod(0o644)
    for target in (new, old):
        done = _vtrain(WRITERS[name](str(target)), tmp_path)
        assert done.returncode == 0, done.stderr
        assert PASSWORD in target.read_text(), "the file holds the real values"
        assert _mode(target) == 0o600, f"{target.name}: {oct(_mode(target))}"


def test_an_output_document_still_goes_to_a_pipe(tmp_path: Path) -> None:
    # -o /dev/stdout: the whole document down a pipe (kubectl apply -f -); no file to keep.
    done = _vtrain(WRITERS["render vertex yaml"]("/dev/stdout"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert PASSWORD in done.stdout


def test_the_study_file_is_private(tmp_path: Path) -> None:
    study = {
        "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
        "parameters": [{"parameter_id": "x", "discrete_value_spec": {"values": [1]}}],
        "algorithm": "GRID_SEARCH",
        "max_trial_count": 1,
        "parallel_trial_count": 1,
    }
    (tmp_path / "s.json").write_text(json.dumps(study))
    out = tmp_path / "o"
    command = [sys.executable, "-c", "pass", f"--password={PASSWORD}"]
    _vtrain(["tune", "--study", "s.json", "--output-dir", str(out), "--", *command], tmp_path)
    assert PASSWORD in (out / "study.json").read_text(), "study.json records the command"
    assert _mode(out / "study.json") == 0o600


@pytest.mark.parametrize("args", [["render", "vertex"], ["submit", "vertex"], ["tune"]])
def test_the_help_says_so(args: list[str], tmp_path: Path) -> None:
    shown = " ".join(_vtrain([*args, "--help"], tmp_path).stdout.split())
    assert "readable by this user only" in shown, shown
