"""Where a run's outputs went: printed at a script's end when it ran alone, and only then."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from vtrain.outputs import print_outputs, summary


def printed(environ: dict[str, str]) -> str:
    out = io.StringIO()
    print_outputs(environ, file=out)
    return out.getvalue()


def test_a_run_alone_says_where_each_output_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vtrain-output" / "model").mkdir(parents=True)
    (tmp_path / "vtrain-output" / "model" / "model.pt").write_bytes(b"x")
    lines = printed({"CLOUD_ML_HP_METRIC_FILE": str(tmp_path / "m.metrics")}).splitlines()
    assert lines[0] == "outputs of this run:"
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows["model"].split() == ["model", "vtrain-output/model/"]
    assert rows["checkpoints"].split()[1].startswith("vtrain-output/checkpoints/run-")
    assert rows["TensorBoard"].split()[2:] == ["vtrain-output/logs/", "(empty)"]
    assert rows["tuning"].split(None, 2)[2] == "m.metrics (not written)"
    assert rows["tensorboard"].startswith("  tensorboard --logdir vtrain-output/logs/")
    assert len(lines) <= 6


@pytest.mark.parametrize(
    "environ",
    [
        {"CLOUD_ML_JOB_ID": "local-1"},  # vtrain local run, vtrain tune, the platform
        {"AIP_MODEL_DIR": "gs://b/model/"},
        {
            "CLUSTER_SPEC": json.dumps(
                {
                    "cluster": {"workerpool0": ["a:1"], "workerpool1": ["b:1"]},
                    "task": {"type": "workerpool1", "index": 0},
                }
            )
        },
    ],  # fmt: skip
)
def test_a_launched_replica_prints_nothing(environ: dict[str, str]) -> None:
    assert printed(environ) == ""


def test_the_tensorboard_line_says_how_to_install_it_when_it_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    text = summary([("model", str(tmp_path) + os.sep)], str(tmp_path / "logs"))
    hint = '(TensorBoard: pip install tensorboard, or "vtrain[tensorflow]")'
    assert (hint in text) == (importlib.util.find_spec("tensorboard") is None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    text = summary([("model", str(tmp_path) + os.sep)], str(tmp_path / "log dir"))
    assert text.splitlines()[-1] == f"tensorboard --logdir '{tmp_path / 'log dir'}'  {hint}"


STEP_SCRIPT = """
import vtrain
manager = vtrain.CheckpointManager()
found = manager.restore()
print("resumed from step", found.step if found is not None else None)
manager.save(120, b"weights")
vtrain.print_outputs()
"""


def test_a_data_variable_set_by_hand_does_not_make_two_runs_one_job(tmp_path: Path) -> None:
    # As the Input data section has the user type it: set the split, run the script twice.
    import subprocess
    import sys

    (tmp_path / "train.py").write_text(STEP_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIP_", "CLOUD_ML_"))}
    env.pop("VTRAIN_OUTPUT_DIR", None)
    env["AIP_TRAINING_DATA_URI"] = str(tmp_path / "data" / "*.jsonl")
    env["AIP_DATA_FORMAT"] = "jsonl"
    runs = [
        subprocess.run([sys.executable, "train.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=60)
        for _ in range(2)
    ]  # fmt: skip
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert "resumed from step None" in run.stdout, run.stdout  # each run starts fresh
        assert "outputs of this run:" in run.stdout
