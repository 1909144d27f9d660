"""The tensorflow command blocks of the README and the docs run as written, with no traceback;
the five-replica Keras job shows none of TensorFlow's native start-up banner, and logs it all.

Started as a user starts it (TF_CPP_MIN_LOG_LEVEL unset): each TensorFlow process prints
the banner as its native libraries load, before `configure()` can silence them, and
`vtrain.local.noise` keeps it off the console.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from readme_blocks import Block, blocks_for, check_clean_run, run_block

from vtrain.local.noise import NOISE

# What every TensorFlow process here prints first, whatever the machine.
BANNER = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
FIVE = "vtrain local run --workers 2 --ps 1 --evaluators 1"


@pytest.mark.parametrize("block", blocks_for("tensorflow"), ids=str)
def test_tensorflow_blocks_run_as_written(block: Block, tmp_path: Path) -> None:
    output = check_clean_run(block, run_block(block, tmp_path))
    assert "failed call to cuInit" not in output  # TF_CPP_MIN_LOG_LEVEL, set by configure()
    assert "will be ignored" not in output  # the example's own shuffle warning
    if FIVE in block.text:
        [logs] = (tmp_path / "vtrain-output" / "local").glob("*/replica-logs")
        no_banner_on_the_console(output, logs)


def no_banner_on_the_console(console: str, logs: Path) -> None:
    """Every replica logged the banner; the console has none of it, and the job's own lines."""
    patterns = [pattern for _, pattern in NOISE]
    names = ("chief-0", "worker-0", "worker-1", "ps-0", "evaluator-0")
    for name in names:
        log = (logs / f"{name}.log").read_text()
        banner = [
            line for line in log.splitlines() if any(p.match(line.encode()) for p in patterns)
        ]
        assert BANNER in banner, log[-3000:]
        for line in banner:
            assert line not in console
    shown = [line.partition("| ")[2] for line in console.splitlines()]
    assert not [line for line in shown if re.match(r"I\d{4} \d\d:\d\d:", line)], console
    assert not [line for line in shown if "absl::InitializeLog" in line], console
    assert re.search(r"^chief-0 +\| Epoch \d+/\d+$", console, re.MULTILINE)  # its own lines stay
    assert console.count("triggered tf.function retracing") <= 1  # its repeats are noise
