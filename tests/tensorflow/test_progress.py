"""Progress from the Keras helpers: `handle.callbacks()` marks each step `fit` trains, an
evaluation batch is progress that is no step, and a commit of `model_checkpoint` is the
progress file's commit; in Keras 3 and in tf-keras (which distributed training uses).

Each run is a process of its own with its watchdog on: the tracker's marks and step
match the steps trained, and the progress file shows the step, a rate and the commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from progressed import run

SCRIPT = Path(__file__).parent / "scripts" / "progress_job.py"


@pytest.mark.parametrize("legacy", ["0", "1"], ids=["keras_3", "tf_keras"])
def test_the_steps_fit_trains_are_the_steps_marked(tmp_path: Path, legacy: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    records = "".join(json.dumps({"x": i / 40, "y": i / 20}) + "\n" for i in range(40))
    (data / "training-0.jsonl").write_text(records)
    found = run(
        SCRIPT, [], tmp_path, AIP_TRAINING_DATA_URI=f"{data}/*.jsonl", TF_USE_LEGACY_KERAS=legacy
    )
    assert (found["marks"], found["step"], found["commit"]) == (10, 10, 10)
    written = found["file"]
    assert (written["marks"], written["step"], written["state"]) == (10, 10, "training")
    assert written["rate"] > 0 and written["commit"] == 10
    last = found["after_close"]
    assert (last["step"], last["state"]) == (10, "done")
