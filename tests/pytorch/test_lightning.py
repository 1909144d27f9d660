"""Lightning across three nodes through VtrainEnvironment, on real processes with gloo."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cluster_run import EXAMPLES, final_parameters, local_run, run_alone
from platform_examples import VERTEX_CLUSTER, cluster_spec

from vtrain import ClusterInfo, UsageError
from vtrain_pytorch import World
from vtrain_pytorch.lightning import VtrainEnvironment

EXAMPLE = str(EXAMPLES / "lightning" / "train.py")


def test_environment_reports_the_cluster_as_lightning_asks() -> None:
    info = ClusterInfo.from_env({"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool1", 1)})
    env = VtrainEnvironment(World.from_cluster(info, nproc_per_node=2, local_rank=1))
    assert env.creates_processes_externally
    assert (env.main_address, env.main_port) == ("cmle-training-workerpool0-ab-0", 2222)
    assert (env.world_size(), env.global_rank(), env.local_rank(), env.node_rank()) == (6, 5, 1, 2)
    env.validate_settings(num_devices=2, num_nodes=3)
    with pytest.raises(UsageError, match=r"Trainer\(devices=1, num_nodes=3\) does not match"):
        env.validate_settings(num_devices=1, num_nodes=3)
    env.set_global_rank(5)
    env.set_world_size(6)
    assert (env.world_size(), env.global_rank()) == (6, 5)


def test_detect_is_true_on_vertex_and_false_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CLUSTER_SPEC", "TF_CONFIG", "RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID"):
        monkeypatch.delenv(name, raising=False)
    assert not VtrainEnvironment.detect()
    monkeypatch.setenv("CLUSTER_SPEC", cluster_spec(VERTEX_CLUSTER, "workerpool1", 0))
    assert VtrainEnvironment.detect()
    monkeypatch.setenv("CLUSTER_SPEC", "{broken")
    assert not VtrainEnvironment.detect()


def test_a_trainer_runs_ddp_across_three_nodes(tmp_path: Path) -> None:
    run = local_run(tmp_path / "out", ["--workers", "2"], [EXAMPLE, "--epochs", "3"])
    assert run.returncode == 0, run.output
    # vtrain's saves say weights_only=False (Lightning logged, per rank and epoch, that it
    # was not set): 12 lines of nine saves before.
    assert "weights_only" not in run.output + "".join(run.logs.values())
    ranks = sorted(run.last(r, "global rank") for r in ("chief-0", "worker-0", "worker-1"))
    assert ranks == ["0 of 3, node 0", "1 of 3, node 1", "2 of 3, node 2"]
    chief = run.params("chief-0")
    assert run.params("worker-0") == chief and run.params("worker-1") == chief
    alone = run_alone(tmp_path / "alone", [EXAMPLE, "--epochs", "3", "--batch-size", "48"])
    assert chief == pytest.approx(final_parameters(alone), rel=1e-5, abs=1e-6)

    out = tmp_path / "out"
    committed = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert committed == ["step-000000000010", "step-000000000020", "step-000000000030"]
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(out / "logs"))
    metrics = (out / "hypertune" / "chief-0.metrics").read_text().splitlines()
    assert [json.loads(m)["global_step"] for m in metrics] == ["10", "20", "30"]
    assert not (out / "hypertune" / "worker-0.metrics").exists()


def test_a_restarted_trainer_resumes_from_the_committed_epoch(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = local_run(out, ["--workers", "1", "--job-id", "j"], [EXAMPLE, "--epochs", "2"])
    assert first.returncode == 0, first.output
    # The same job started again, as after a restart, with more epochs to go.
    second = local_run(out, ["--workers", "1", "--job-id", "j"], [EXAMPLE, "--epochs", "4"])
    assert second.returncode == 0, second.output
    assert "Restoring states from the checkpoint path" in second.logs["chief-0"]
    steps = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert steps[-1] == "step-000000000060" and "step-000000000030" in steps


def test_a_training_state_checkpoint_is_refused_by_the_callback(tmp_path: Path) -> None:
    import torch

    from vtrain import CheckpointError
    from vtrain.checkpoints import CheckpointManager
    from vtrain_pytorch.lightning import VtrainCheckpoint
    from vtrain_pytorch.state import TrainingState

    manager = CheckpointManager(tmp_path, is_leader=True, environ={})
    TrainingState(torch.nn.Linear(2, 1), manager=manager).save(120)
    callback = VtrainCheckpoint(manager)
    with pytest.raises(CheckpointError, match=r"written by another helper.*TrainingState"):
        callback.resume_path()
    assert callback._restored is None
