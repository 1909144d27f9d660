"""Keras: a job killed mid-training keeps one MLflow run, each epoch's logs in it.

The example turns `handle.track.autolog()` on: the progress callback sends each
epoch's logs (the loss) to the job's run, at the epoch's number, from the leader.
A worker is killed mid-training under `vtrain local run --track mlflow`; the
restarted job resumes at its last committed epoch and reopens the same run. The
kept store is served again and read back over MLflow's REST API.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cluster_run import EXAMPLES, local_run
from mlflow_reading import one_resumed_run, params, served


@pytest.mark.faults  # a kill cell: `nox -s faults` (the default sessions track PyTorch's)
def test_a_killed_keras_job_keeps_one_mlflow_run_of_its_epochs(tmp_path: Path) -> None:
    run = local_run(
        tmp_path / "job",
        ["--workers", "1", "--track", "mlflow", "--kill", "worker:0@14"]
        + ["--restart-job-on-worker-restart"],  # MWMS: the chief, the run's writer, restarts too
        # About 6 s to the first epoch, then 1 s an epoch: the kill lands mid-training.
        [str(EXAMPLES / "keras" / "train.py"), "--epochs", "12", "--epoch-delay", "1"],
    )
    assert run.returncode == 0, run.output[-3000:]
    browse = run.output.split("browse them: ", 1)[1].splitlines()[0]
    with served(browse, tmp_path) as runs:
        found = one_resumed_run(runs, "loss", list(range(1, 13)))
        assert params(found)["epochs"] == "12"
        assert runs.artifacts(found["info"]["run_id"]), "the model is the run's artifact"
