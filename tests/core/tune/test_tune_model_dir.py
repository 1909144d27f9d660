"""`vtrain tune` makes each trial's folders, as `vtrain local run` and the platform do: a trial
that writes its model into AIP_MODEL_DIR with a plain open() succeeds (issue 41)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tune_helpers import study

from vtrain.cli import main

# No makedirs: the folder is the platform's to make, and Vertex's AIP_MODEL_DIR is there.
TRIAL = """
import os
from vtrain.hypertune import report
for name in ("AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR"):
    assert os.path.isdir(os.environ[name]), name
with open(os.path.join(os.environ["AIP_MODEL_DIR"], "model.txt"), "w") as f:
    f.write(os.environ["CLOUD_ML_TRIAL_ID"])
report(1.0)
"""


@pytest.mark.parametrize("replicas", [[], ["--workers", "1"]])
def test_every_trial_writes_its_model_into_its_own_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], replicas: list[str]
) -> None:
    (tmp_path / "trial.py").write_text(TRIAL)
    (tmp_path / "study.json").write_text(json.dumps(study(max_trial_count=2)))
    out = tmp_path / "out"
    argv = ["tune", "--study", str(tmp_path / "study.json"), "--output-dir", str(out)]
    status = main([*argv, *replicas, "--", sys.executable, str(tmp_path / "trial.py")])
    captured = capsys.readouterr()
    assert status == 0, captured.out + captured.err
    results = json.loads((out / "study.json").read_text())
    assert [t["status"] for t in results["trials"]] == ["SUCCEEDED", "SUCCEEDED"]
    for trial in ("1", "2"):
        assert (out / trial / "model" / "model.txt").read_text() == trial
