"""The README's PyTorch and Lightning command blocks run as written, and say what they promise."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from readme_blocks import Block, blocks_for, run_block


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
    if re.search(r"^python examples/\w+/train.py", block.text, re.MULTILINE):
        assert done.stdout.count("outputs of this run:") == block.text.count("python examples/")
    if block.text.count("python examples/pytorch/train.py") == 2:  # the second starts fresh
        assert done.stdout.count("rank 0/1: starting at step 0 ") == 2
        assert "resumed" not in done.stdout
    if "vtrain local run" in block.text:
        assert "outputs of this job:\n  model " in done.stdout
        assert "vtrain-output/local/" in done.stdout.split("outputs of this job:")[1]
        # The example's tracked loss goes to AIP_TENSORBOARD_LOG_DIR too: a line offers it.
        assert "tensorboard --logdir vtrain-output/local/" in done.stdout
    if "vtrain tune" in block.text:
        assert "study SUCCEEDED" in done.stdout
        assert "outputs of the best trial" in done.stdout
        assert (tmp_path / "vtrain-output/tune/examples/pytorch/study-yaml/study.json").exists()
