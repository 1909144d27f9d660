"""PyTorch and Lightning: a job killed mid-training keeps one MLflow run, on a real server.

`vtrain local run --track mlflow` serves the job's own server; the DDP example tracks its
params and each step's loss, the Lightning example's metrics go through `VtrainLogger`. A
worker is killed once the first checkpoint is behind it; the restarted leader reopens the
same run. The store is then served again with
the command the summary printed, and read back over MLflow's REST API.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cluster_run import EXAMPLES, local_run
from mlflow_reading import one_resumed_run, params, served


def test_a_killed_ddp_job_keeps_one_mlflow_run(tmp_path: Path) -> None:
    out = tmp_path / "job"
    run = local_run(
        out,
        ["--workers", "1", "--track", "mlflow", "--kill", "worker:0@9"],
        [str(EXAMPLES / "pytorch" / "train.py"), "--steps", "60", "--step-delay", "0.15"],
    )
    assert run.returncode == 0, run.output[-3000:]
    assert "tracking to an MLflow server on http://127.0.0.1:" in run.output
    browse = run.output.split("browse them: ", 1)[1].splitlines()[0]
    with served(browse, tmp_path) as runs:
        found = one_resumed_run(runs, "train_loss", list(range(1, 61)))
        run_id = found["info"]["run_id"]
        assert params(found)["steps"] == "60"
        # handle.report's tuning metric goes to the run too.
        ((step, value),) = runs.history(run_id, "loss")
        assert step == 60 and value == pytest.approx(
            float(run.last("chief-0", "final loss")), abs=1e-6
        )
        assert "model.pt" in runs.artifacts(run_id), runs.artifacts(run_id)


@pytest.mark.faults  # a kill cell: `nox -s faults`; the DDP one is the default sessions'
def test_a_killed_lightning_job_keeps_one_mlflow_run(tmp_path: Path) -> None:
    # 2 replicas x 16 rows of 480: 15 steps an epoch, one commit an epoch; 0.2 s a step.
    ticking = Path(__file__).parent / "scripts" / "ticking.py"
    example = [str(ticking), str(EXAMPLES / "lightning" / "train.py"), "--epochs", "4"]
    run = local_run(
        tmp_path / "job",
        ["--workers", "1", "--track", "mlflow", "--kill", "worker:0@14"],
        example,
        TICK_DELAY="0.2",
    )
    assert run.returncode == 0, run.output[-3000:]
    browse = run.output.split("browse them: ", 1)[1].splitlines()[0]
    with served(browse, tmp_path) as runs:
        found = one_resumed_run(runs, "train_loss", [15, 30, 45, 60])
        assert params(found)["epochs"] == "4"
        assert "model.pt" in runs.artifacts(found["info"]["run_id"])
