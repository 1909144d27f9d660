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


def test_a_server_that_is_down_costs_one_line_and_never_a_step(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import socket
    import time

    from vtrain.storage import open_location
    from vtrain.track import Track
    from vtrain.track.sinks import made

    with socket.socket() as s:  # a port nothing listens on once it is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    environ = {"MLFLOW_TRACKING_URI": f"http://127.0.0.1:{port}"}
    track = Track(
        leader=True,
        run="down",
        folder=lambda: open_location(str(tmp_path / "down")),
        backends=made(("mlflow",), "down", lambda: open_location(str(tmp_path)), environ),
    )
    took = []
    for step in range(1, 301):
        start = time.perf_counter()
        track.metrics({"loss": 1.0 / step}, step=step)
        took.append(time.perf_counter() - start)
        time.sleep(0.01)
    # Long enough for the sender to import MLflow and try once (seconds, under load): it gives
    # up at close after that try fails, and says why.
    track.close(timeout=60)
    said = [r.getMessage() for r in caplog.records if "MLflow run down" in r.getMessage()]
    assert len([m for m in said if "cannot write" in m]) == 1, said
    # A bound for a hang, not a timing: a call queues and returns. One call may wait while the
    # sender's thread imports MLflow: its C extensions (pandas, pyarrow) load with the GIL held,
    # which took 5 s once with three test sessions on two cores.
    slow = [t for t in took if t > 0.5]
    assert len(slow) <= 1 and max(took) < 30, slow
    # The run's own record has every step, whatever the server did.
    lines = (tmp_path / "down" / "attempt-1.jsonl").read_text().splitlines()
    assert sum('"kind":"metric"' in line for line in lines) == 300
