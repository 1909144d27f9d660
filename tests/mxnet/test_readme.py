"""The mxnet command blocks of the README and the docs run as written, with no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from readme_blocks import Block, blocks_for, check_clean_run, run_block


@pytest.mark.parametrize("block", blocks_for("mxnet"), ids=str)
def test_mxnet_blocks_run_as_written(block: Block, tmp_path: Path) -> None:
    check_clean_run(block, run_block(block, tmp_path))
