"""A Katib trial's rehearsal judges that trial's folders (issue 41): its replicas are named trial 3
by the manifest's env (CLOUD_ML_TRIAL_ID), not by a flag, and write under ``<job>/3/``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Result
from targets import STUDY

Run = Callable[..., Result]

# The leader writes where vtrain's context says: the trial's own model folder.
CONTEXT_SAVES = """
import os
from vtrain import ClusterInfo
from vtrain.context import RunContext
from vtrain.hypertune import report
if ClusterInfo.from_env().is_chief:
    folder = RunContext.from_env().model_dir
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, "model.txt"), "w").write("m")
report(1.0)
"""
# The leader writes into the job's folder, as if it were no trial: not where Katib looks.
JOB_SAVES = CONTEXT_SAVES.replace(
    "RunContext.from_env().model_dir", "os.path.join(os.environ['VTRAIN_OUTPUT_DIR'], 'model')"
)


def rehearse(tmp_path: Path, script: str) -> tuple[dict[str, Any], str]:
    (tmp_path / "trial.py").write_text(script)
    done = subprocess.run(
        [sys.executable, "-m", "vtrain", "local", "run", "--job", str(tmp_path / "katib.json")]
        + ["--trial", "3", "--output-dir", str(tmp_path / "out")]
        + ["--verdict-json", str(tmp_path / "v.json"), "--", sys.executable, "trial.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((tmp_path / "v.json").read_text()), done.stdout


@pytest.mark.parametrize(("script", "ready"), [(CONTEXT_SAVES, True), (JOB_SAVES, False)])
def test_a_katib_trial_is_judged_by_its_own_model_folder(
    vtrain: Run, tmp_path: Path, script: str, ready: bool
) -> None:
    done = vtrain(
        "render",
        "kubeflow",
        "--name",
        "exp",
        "--framework",
        "tensorflow",
        "--workers",
        "1",
        "--image",
        "gcr.io/p/t:1",
        "--study",
        STUDY,
        "--format",
        "json",
        "-o",
        str(tmp_path / "katib.json"),
        "--",
        "python",
        "-m",
        "trainer.task",
    )
    assert done.status == 0, done.err
    verdict, stdout = rehearse(tmp_path, script)
    leader = [f for f in verdict["findings"] if f["check"] == "leader"]
    trial_model = str(tmp_path / "out" / "3" / "model")
    if ready:
        assert (tmp_path / "out" / "3" / "model" / "model.txt").exists()
        assert leader == [], stdout
    else:
        assert (tmp_path / "out" / "model" / "model.txt").exists()
        (found,) = leader
        assert "no replica wrote the model" in found["detail"], found
        assert trial_model in found["detail"], found
