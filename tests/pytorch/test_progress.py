"""Progress from every PyTorch helper: `handle.batches`, `handle.step()`, the Lightning callback.

Each run is a process of its own with its watchdog on: the tracker's marks and step
match the steps trained, and the progress file shows the step and a rate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from progressed import run

SCRIPT = Path(__file__).parent / "scripts" / "progress_job.py"


@pytest.mark.parametrize(
    ("mode", "steps", "marks", "commit"),
    [
        ("loop", 10, 10, None),  # each batch taken is a step
        # handle.step() marks them, and from then on a batch is no step: the first batch,
        # taken before the loop's first handle.step(), was counted as one.
        ("explicit", 10, 11, None),
        # VtrainProgress marks trainer.global_step (validation batches are no steps), and
        # VtrainCheckpoint's commit of the last step is the file's commit.
        ("lightning", 10, 10, 10),
    ],
)
def test_the_steps_trained_are_the_steps_marked(
    tmp_path: Path, mode: str, steps: int, marks: int, commit: int | None
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "training-0.jsonl").write_text("".join(json.dumps({"x": i}) + "\n" for i in range(40)))
    found = run(SCRIPT, [mode], tmp_path, AIP_TRAINING_DATA_URI=f"{data}/*.jsonl")
    assert (found["marks"], found["step"], found["commit"]) == (marks, steps, commit)
    written = found["file"]
    assert (written["marks"], written["step"], written["state"]) == (marks, steps, "training")
    assert written["rate"] > 0 and written["commit"] == commit
    last = found["after_close"]
    assert (last["step"], last["state"]) == (steps, "done")
