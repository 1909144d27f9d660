"""Progress from the MXNet helpers: a batch `handle.batches` hands out is a step, unless the
loop calls `handle.step()`.

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
    ("mode", "marks"),
    [
        ("loop", 10),  # each batch taken is a step
        # handle.step() marks them, and from then on a batch is no step: the first batch,
        # taken before the loop's first handle.step(), was counted as one.
        ("explicit", 11),
    ],
)
def test_the_steps_trained_are_the_steps_marked(tmp_path: Path, mode: str, marks: int) -> None:
    data = tmp_path / "data"
    data.mkdir()
    records = "".join(json.dumps({"x": i, "y": 2 * i}) + "\n" for i in range(40))
    (data / "training-0.jsonl").write_text(records)
    found = run(SCRIPT, [mode], tmp_path, AIP_TRAINING_DATA_URI=f"{data}/*.jsonl")
    assert (found["marks"], found["step"]) == (marks, 10)
    written = found["file"]
    assert (written["marks"], written["step"], written["state"]) == (marks, 10, "training")
    assert written["rate"] > 0
    last = found["after_close"]
    assert (last["step"], last["state"]) == (10, "done")
