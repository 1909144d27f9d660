"""TrainingState and save_model: what they write, where, and what they leave behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
import torch

import vtrain
from vtrain.checkpoints import CheckpointManager
from vtrain_pytorch.state import TrainingState


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary-files folder of this test's own, to see what a restore leaves there."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_a_first_run_has_no_step_and_empty_extra(tmp_path: Path) -> None:
    model = torch.nn.Linear(2, 1)
    state = TrainingState(model, manager=CheckpointManager(tmp_path, is_leader=True, environ={}))
    assert state.restore() is None
    assert state.extra == {}


def test_a_restore_through_the_fuse_mount_leaves_no_copy(tmp_path: Path, scratch: Path) -> None:
    # On /gcs (FUSE) and gs:// a restore copies the step to a local folder first.
    manager = CheckpointManager(tmp_path / "ckpt", is_leader=True, fuse=True, environ={})
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    TrainingState(model, optimizer, manager=manager).save(7, epoch=3)

    fresh = torch.nn.Linear(2, 1)
    state = TrainingState(fresh, torch.optim.SGD(fresh.parameters(), lr=0.1), manager=manager)
    assert state.restore() == 7
    assert state.extra == {"epoch": 3}
    assert torch.equal(fresh.weight, model.weight)
    assert [p.name for p in scratch.iterdir() if p.name.startswith("vtrain-")] == []


def test_the_model_goes_to_the_trial_of_the_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The trial comes from CLUSTER_SPEC alone (no CLOUD_ML_TRIAL_ID): model and checkpoints
    # must both land in that trial's folder.
    spec = {
        "cluster": {"workerpool0": ["127.0.0.1:1"]},
        "task": {"type": "workerpool0", "index": 0, "trial": "3"},
        "environment": "cloud",
    }
    # configure() writes RANK & co. into os.environ: give it a copy that the test throws away.
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "TMPDIR")}
    env.update(CLUSTER_SPEC=json.dumps(spec), VTRAIN_OUTPUT_DIR=str(tmp_path))
    monkeypatch.setattr(os, "environ", env)
    handle = vtrain.plugins.get("pytorch").configure()
    saved = handle.save_model(torch.nn.Linear(2, 1))
    assert saved == str(tmp_path / "3" / "model" / "model.pt")
    assert CheckpointManager().directory == str(tmp_path / "3" / "checkpoints")


def test_keep_is_passed_to_the_manager(tmp_path: Path) -> None:
    model = torch.nn.Linear(2, 1)
    state = TrainingState(model, keep=2, is_leader=True, directory=tmp_path, environ={})
    for step in (1, 2, 3, 4):
        state.save(step)
    assert state.manager.steps() == [3, 4]


def test_manager_options_beside_a_manager_are_refused(tmp_path: Path) -> None:
    manager = CheckpointManager(tmp_path, is_leader=True, environ={})
    with pytest.raises(vtrain.UsageError, match=r"TrainingState: manager options given .*'keep'"):
        TrainingState(torch.nn.Linear(2, 1), manager=manager, keep=3)


def test_a_lightning_checkpoint_is_refused_not_loaded(tmp_path: Path) -> None:
    from vtrain_pytorch.provenance import LIGHTNING, record

    manager = CheckpointManager(tmp_path, is_leader=True, environ={})

    def lightning_save(folder: str) -> None:  # what VtrainCheckpoint writes
        Path(folder, "lightning.ckpt").write_bytes(b"not a TrainingState")
        record(folder, LIGHTNING)

    manager.save(5, lightning_save)
    state = TrainingState(torch.nn.Linear(2, 1), manager=manager)
    with pytest.raises(
        vtrain.CheckpointError, match=r"written by another helper.*VtrainCheckpoint"
    ):
        state.restore()


def test_the_example_run_twice_alone_starts_fresh_each_time(tmp_path: Path) -> None:
    # Standalone runs used to share ./vtrain-output/checkpoints: the second trained nothing.
    from cluster_run import EXAMPLES, clean_env

    example = str(EXAMPLES / "pytorch" / "train.py")
    env = clean_env(CLOUD_ML_HP_METRIC_FILE=str(tmp_path / "m"))
    env.pop("VTRAIN_OUTPUT_DIR", None)
    said = ""
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, example, "--steps", "20"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "starting at step 0" in done.stdout
        assert "resumed" not in done.stdout
        said += done.stdout
    # Each run has one folder for all it wrote, and says which; nothing is shared.
    assert [p.name for p in (tmp_path / "vtrain-output").iterdir()] == ["runs"]
    runs = list((tmp_path / "vtrain-output" / "runs").iterdir())
    assert len(runs) == 2
    for run in runs:
        assert (run / "model" / "model.pt").is_file() and any((run / "checkpoints").iterdir())
        assert f"  model             vtrain-output/runs/{run.name}/model/\n" in said


def test_a_background_save_holds_the_weights_of_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # torch.save on the save thread waits until training has changed the weights: without
    # the copy save() takes, the step would hold the changed ones.
    trained_on = threading.Event()
    real_save = torch.save

    def save_later(*args: Any, **kwargs: Any) -> None:
        assert trained_on.wait(30)
        real_save(*args, **kwargs)

    monkeypatch.setattr(torch, "save", save_later)
    model = torch.nn.Linear(64, 64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(1, 64)).sum().backward()
    optimizer.step()
    expected = {k: v.clone() for k, v in model.state_dict().items()}
    manager = CheckpointManager(tmp_path, is_leader=True, environ={})
    state = TrainingState(model, optimizer, manager=manager)
    state.save(1)  # blocking=False by default: returns before the step is committed
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1000.0)  # the next training steps change the tensors in place
    trained_on.set()
    state.wait()
    fresh = torch.nn.Linear(64, 64)
    restored = TrainingState(
        fresh, torch.optim.SGD(fresh.parameters(), lr=0.1, momentum=0.9), manager=manager
    )
    assert restored.restore() == 1
    for key, value in fresh.state_dict().items():
        assert torch.equal(value, expected[key]), key
