"""The PyTorch and Lightning command blocks of the README and the docs run as written, and say
what they promise."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mlflow_reading import one_resumed_run, params, served
from readme_blocks import Block, blocks_for, run_block
from report_page import check_job_report
from trainjob_file import STATUS


@pytest.mark.parametrize("block", blocks_for("pytorch"), ids=str)
def test_pytorch_blocks_run_as_written(block: Block, tmp_path: Path) -> None:
    done = run_block(block, tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    if "--kill" not in block.text:  # a killed replica's peers print their tracebacks
        assert "Traceback" not in output
    assert "Failed to initialize NumPy" not in output
    if ":STOP" in block.text:  # a frozen worker: the chief's watchdog, within 30 s (issue 45)
        assert "stays frozen, as no platform restarts a machine that is still up" in output
        [silent] = re.findall(r"chief-0 was stuck \(no progress for (\d+) s after step", output)
        assert int(silent) <= 30, output
        assert "restarting every replica" in output
        resumed = re.findall(r"resumed from step (\d+)", done.stdout)
        assert len(resumed) == 2 and int(resumed[0]) >= 10, output  # both, from a checkpoint
        # Its stacks are in its log; the console has the line that names the wait.
        log = (tmp_path / "vtrain-output").glob("local/*/replica-logs/chief-0.log")
        assert "most recent call first" in next(log).read_text()
    elif "--kill" in block.text:
        assert "replicas that train with it are expected to fail too, and restart" in output
        resumed = re.findall(r"resumed from step (\d+)", done.stdout)
        assert len(resumed) == 3 and int(resumed[0]) >= 10, output  # all three, from a checkpoint
        (job,) = (tmp_path / "vtrain-output" / "local").iterdir()
        if "--trainjob" in block.text:  # rehearsed as the TrainJob: its nodes, its status
            assert f"job {job.name} (trainjob)" in output and "PET_NPROC_PER_NODE" in output
            assert STATUS in done.stdout and "metrics step=120, total_steps=120" in done.stdout
        if "--track mlflow" in block.text:
            check_tracked(done.stdout, tmp_path)
        if "--report" in block.text:  # the job's page, drawn from its timeline, in a browser
            check_job_report(Path(done.stdout.split("report: ", 1)[1].splitlines()[0]), job)
            assert re.search(r"^goodput \d+%: ", done.stdout, re.MULTILINE), done.stdout
    if re.search(r"^python examples/\w+/train.py", block.text, re.MULTILINE):
        assert done.stdout.count("outputs of this run:") == block.text.count("python examples/")
    if block.text.count("python examples/pytorch/train.py") == 2:  # the second starts fresh
        assert done.stdout.count("rank 0/1: starting at step 0 ") == 2
        assert "resumed" not in done.stdout
    if "vtrain local run" in block.text:
        assert "outputs of this job:\n  model " in done.stdout
        assert "vtrain-output/local/" in done.stdout.split("outputs of this job:")[1]
        # The example's tracked loss goes to AIP_TENSORBOARD_LOG_DIR too, unless --track names
        # other backends: a line offers it. The quickstart tracks nothing: none is offered.
        offered = "tensorboard --logdir vtrain-output/local/" in done.stdout
        offers = "--track" not in block.text and "examples/quickstart.py" not in block.text
        assert offered is offers, done.stdout
    if "examples/quickstart.py" in block.text:  # each trainer trained its 100 steps
        losses = re.findall(r"rank \d: 100 steps, loss (\d+\.\d+)", done.stdout)
        assert len(losses) == block.text.count("--workers 2") * 2 + 1, done.stdout
        assert all(float(loss) < 0.05 for loss in losses), losses  # y = x.w + noise of 0.01
    if "vtrain tune" in block.text:
        assert "study SUCCEEDED" in done.stdout
        assert "outputs of the best trial" in done.stdout
        assert (tmp_path / "vtrain-output/tune/examples/pytorch/study-yaml/study.json").exists()


def check_tracked(stdout: str, folder: Path) -> None:
    """The killed job's one MLflow run, read over the REST API of a server that serves the
    store the job kept, with the command its summary printed: every step once, the resume
    marked, the params once, the tuning metric, the model."""
    assert "tracking to an MLflow server on http://127.0.0.1:" in stdout
    browse = stdout.split("browse them: ", 1)[1].splitlines()[0]
    with served(browse, folder) as runs:
        found = one_resumed_run(runs, "train_loss", list(range(1, 121)))
        run_id = found["info"]["run_id"]
        assert params(found)["steps"] == "120"
        final = float(stdout.split("final loss ", 1)[1].split()[0])
        ((step, value),) = runs.history(run_id, "loss")  # handle.report's, there too
        assert step == 120 and value == pytest.approx(final, abs=1e-6)
        assert "model.pt" in runs.artifacts(run_id), runs.artifacts(run_id)
