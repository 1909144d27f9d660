"""The README's mxnet command blocks run as written, with no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from readme_blocks import Block, blocks_for, run_block


@pytest.mark.parametrize("block", blocks_for("mxnet"), ids=str)
def test_mxnet_blocks_run_as_written(block: Block, tmp_path: Path) -> None:
    done = run_block(block, tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    if "vtrain local run" in block.text:  # the job ends with where its outputs are
        assert "tensorboard --logdir vtrain-output/local/" in done.stdout
    if "python examples/" in block.text.split("vtrain local run")[0]:  # a run alone, too
        assert "outputs of this run:" in done.stdout
