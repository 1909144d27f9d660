"""A `vtrain tune` study in MLflow: one parent run, a child run per trial, reused on --resume.

The PyTorch example's four-trial study runs under `vtrain tune --track mlflow` with
MLFLOW_TRACKING_URI naming a real tracking server (`vtrain local run --track mlflow`'s
own server is tests/pytorch/test_track_mlflow.py's). Each trial's leader writes into
the child run the study opened for it; the runs are read over MLflow's REST API, and
a rerun with `--resume` (every trial done) makes no new run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cluster_run import EXAMPLES, clean_env
from mlflow_reading import params, served, tags
from report_page import check_study_report, written_report


def tune(out: Path, uri: str, *options: str) -> str:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "tune",
            "--study",
            str(EXAMPLES / "pytorch" / "study.yaml"),
        ]
        + ["--output-dir", str(out), "--track", "mlflow", *options, "--"]
        + [sys.executable, str(EXAMPLES / "pytorch" / "train.py"), "--steps", "12"],
        env=clean_env(MLFLOW_TRACKING_URI=uri),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def test_a_study_is_a_parent_run_with_a_child_run_per_trial(tmp_path: Path) -> None:
    out = tmp_path / "study"
    store = tmp_path / "store"
    browse = (
        f"mlflow server --backend-store-uri sqlite:///{store}.db --artifacts-destination {store}"
    )
    with served(browse, tmp_path) as runs:
        tune(out, runs.uri)
        tune(out, runs.uri, "--resume")
        found = runs.search()
        parents = [r for r in found if tags(r).get("vtrain.study") == "1"]
        assert len(parents) == 1, [r["info"]["run_name"] for r in found]
        parent = parents[0]["info"]["run_id"]
        assert params(parents[0])["max_trial_count"] == "4"
        children = [r for r in found if tags(r).get("mlflow.parentRunId") == parent]
        assert len(children) == 4 and len(found) == 5, [r["info"]["run_name"] for r in found]
        for child in children:
            shown = params(child)
            assert set(shown) >= {"learning_rate", "global-batch-size"}, shown
            # The trial's own leader wrote into it: its flags, and the loss it reported.
            assert shown["steps"] == "12", shown
            assert [s for s, _ in runs.history(child["info"]["run_id"], "loss")] == [12]
        # The study's run: each trial's final metric at the trial's number.
        assert sorted(s for s, _ in runs.history(parent, "loss")) == [1, 2, 3, 4]
    # `vtrain report` of the study's folder: its trials against their parameters, in a browser.
    check_study_report(written_report(out), out)
