"""Progress from the XGBoost helpers: a round is a step (`handle.callbacks()`), a batch
`handle.batches` hands XGBoost is progress that is no step (it is read before the rounds).

The run is a process of its own with its watchdog on: the tracker's marks and step are
the rounds boosted, and the progress file shows the step, a rate and the last commit.
"""

from __future__ import annotations

import json
from pathlib import Path

from progressed import run

SCRIPT = Path(__file__).parent / "scripts" / "progress_job.py"


def test_each_round_is_a_step_and_the_batches_are_none(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    records = "".join(json.dumps({"x": i, "y": 2 * i}) + "\n" for i in range(40))
    (data / "training-0.jsonl").write_text(records)
    found = run(SCRIPT, [], tmp_path, AIP_TRAINING_DATA_URI=f"{data}/*.jsonl")
    # 5 batches, read on more than one pass: none of them counted.
    assert (found["marks"], found["step"], found["commit"]) == (8, 8, 8)
    written = found["file"]
    assert (written["marks"], written["step"], written["state"]) == (8, 8, "training")
    assert written["rate"] > 0 and written["commit"] == 8
    last = found["after_close"]
    assert (last["step"], last["state"]) == (8, "done")
