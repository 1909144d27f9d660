"""XGBoost: a job killed mid-training keeps one MLflow run, its rounds' evaluation in it.

The example turns `handle.track.autolog()` on: each round's `validation-rmse`, as
XGBoost computes it, goes to the job's run from the leader. A worker is killed
mid-training under `vtrain local run --track mlflow`; the restarted job resumes
from the last committed round and reopens the same run. The kept store is served
again and read back over MLflow's REST API.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cluster_run import EXAMPLES, local_run
from mlflow_reading import one_resumed_run, params, served

TICKING = str(Path(__file__).parent / "scripts" / "ticking.py")


@pytest.mark.faults  # a kill cell: `nox -s faults` (the default sessions track PyTorch's)
def test_a_killed_job_keeps_one_mlflow_run_of_its_rounds(tmp_path: Path) -> None:
    example = [TICKING, str(EXAMPLES / "xgboost" / "train.py"), "--rounds", "80"]
    run = local_run(
        tmp_path / "job",
        ["--workers", "1", "--track", "mlflow", "--kill", "worker:0@9"],
        [*example, "--rows", "2000", "--nthread", "1", "--checkpoint-every", "5"],
        ROUND_DELAY="0.1",
    )
    assert run.returncode == 0, run.output[-3000:]
    browse = run.output.split("browse them: ", 1)[1].splitlines()[0]
    with served(browse, tmp_path) as runs:
        found = one_resumed_run(runs, "validation-rmse", list(range(1, 81)))
        assert params(found)["rounds"] == "80"
        assert "model.bst" in runs.artifacts(found["info"]["run_id"])
