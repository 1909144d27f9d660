"""`vtrain local run --resume-from CHECKPOINT_DIR`: a new job that continues an old one.

Every replica gets VTRAIN_RESUME_FROM; until the new job commits a step of its own, its
checkpoints restore the old job's newest, and the old folder is only read.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vtrain import CheckpointError, CheckpointManager

RESUMER = str(Path(__file__).parent / "replicas" / "resumer.py")


def results(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}


def test_a_new_job_continues_the_old_ones_commit_then_its_own(
    vtrain: Callable[..., Any], tmp_path: Path
) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for name in ("r1", "r2", "r3"):
        (tmp_path / name).mkdir()

    def run(out: Path, results: str, *options: str) -> None:
        done = vtrain(
            "--output-dir",
            str(out),
            *options,
            "--",
            sys.executable,
            RESUMER,
            str(tmp_path / results),
        )
        assert done.returncode == 0, done.stdout + done.stderr

    run(old, "r1")
    assert {r["resumed"] for r in results(tmp_path / "r1").values()} == {0}
    # Another output folder, another worker count; the old job's folder, relative.
    run(new, "r2", "--workers", "2", "--resume-from", "old/checkpoints")
    second = results(tmp_path / "r2")
    assert set(second) == {"chief-0", "worker-0", "worker-1"}
    for found in second.values():
        assert found == {"resumed": 1, "held": str(old), "from": str(old / "checkpoints")}
    assert CheckpointManager(old / "checkpoints", environ={}).steps() == [1]  # only read
    assert CheckpointManager(new / "checkpoints", environ={}).steps() == [2]

    # Once the new job has a commit of its own, it resumes that one.
    run(new, "r3", "--resume-from", str(old / "checkpoints"))
    assert results(tmp_path / "r3")["chief-0"] == {
        "resumed": 2,
        "held": str(new),
        "from": str(old / "checkpoints"),
    }


def test_a_folder_without_a_committed_step_is_refused_before_the_job_starts(
    vtrain: Callable[..., Any], tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    for folder in ("empty", "missing"):
        done = vtrain("--resume-from", folder, "--", sys.executable, "-c", "")
        assert done.returncode == 2, done.stderr
        assert f"--resume-from: no committed step to continue from (got '{folder}')" in (
            done.stderr
        ), done.stderr
        assert "expected the checkpoint folder of a job that committed a step" in done.stderr


def test_a_resume_from_folder_that_lost_its_steps_fails_the_restore(tmp_path: Path) -> None:
    env = {"AIP_CHECKPOINT_DIR": str(tmp_path / "mine"), "VTRAIN_RESUME_FROM": str(tmp_path)}
    with pytest.raises(CheckpointError, match=r"no committed step to continue from"):
        CheckpointManager(environ=env).restore()
    # A folder of its own, named explicitly, is not the job's: the variable does not apply.
    assert CheckpointManager(tmp_path / "other", environ=env).restore() is None


def test_a_handle_passes_the_old_folder_to_its_own_checkpoints_only(tmp_path: Path) -> None:
    from vtrain import ClusterInfo
    from vtrain.plugins.handle import Handle

    class Keeping(Handle):
        checkpoint_subfolder = "keras"  # as Keras keeps its steps

    env = {"AIP_CHECKPOINT_DIR": str(tmp_path / "mine"), "VTRAIN_RESUME_FROM": "gs://b/old/"}
    info = ClusterInfo.from_env(env)
    assert Handle(info, True, environ=env).checkpoints.resume_from == "gs://b/old/"
    assert Keeping(info, True, environ=env).checkpoints.resume_from == "gs://b/old/keras"
    other = Handle(info, True, environ=env).checkpoint_manager(str(tmp_path / "other"))
    assert other.resume_from is None
    assert (
        Handle(info, True, environ={**env, "VTRAIN_RESUME_FROM": ""}).checkpoints.resume_from
        is None
    )
