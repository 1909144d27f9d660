"""The Lightning example on `vtrain local run`'s console: no tips, no accelerators it did not
find; both in the replica's log (`vtrain.local.noise`)."""

from __future__ import annotations

from pathlib import Path

from cluster_run import EXAMPLES, local_run

NOISE = ("Tip: ", "GPU available: ", "TPU available: ")


def test_lightning_s_tips_and_accelerator_lines_go_to_the_log_alone(tmp_path: Path) -> None:
    run = local_run(
        tmp_path / "out", ["--workers", "1"], [str(EXAMPLES / "lightning" / "train.py")]
    )
    assert run.returncode == 0, run.output[-5000:]
    log = run.logs["chief-0"]
    for start in NOISE:
        assert start in log, log[-3000:]
        assert start not in run.output
    assert "final parameters" in run.output  # the job's own lines stay
