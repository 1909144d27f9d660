"""The README's tensorflow command blocks run as written, with no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from readme_blocks import Block, blocks_for, check_clean_run, run_block


@pytest.mark.parametrize("block", blocks_for("tensorflow"), ids=str)
def test_tensorflow_blocks_run_as_written(block: Block, tmp_path: Path) -> None:
    output = check_clean_run(block, run_block(block, tmp_path))
    assert "failed call to cuInit" not in output  # TF_CPP_MIN_LOG_LEVEL, set by configure()
    assert "will be ignored" not in output  # the example's own shuffle warning
