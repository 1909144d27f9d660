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
    from vtrain.context import standalone_run_id

    monkeypatch.chdir(tmp_path)
    folder = f"vtrain-output/runs/{standalone_run_id()}"
    (tmp_path / folder / "model").mkdir(parents=True)
    (tmp_path / folder / "model" / "model.pt").write_bytes(b"x")
    lines = printed({}).splitlines()
    assert lines[0] == "outputs of this run:"
    rows = {line.split()[0]: line for line in lines[1:]}
    # One folder holds all of it, the tuning metric too (before: /tmp/hypertune/).
    assert rows["model"].split() == ["model", f"{folder}/model/"]
    assert rows["checkpoints"].split() == ["checkpoints", f"{folder}/checkpoints/", "(empty)"]
    assert rows["TensorBoard"].split()[2:] == [f"{folder}/logs/", "(empty)"]
    metric = f"{folder}/hypertune/output.metrics"
    assert rows["tuning"].split(None, 2)[2] == f"{metric} (not written)"
    # No event files: nothing for TensorBoard to show, so no line offers to.
    assert "tensorboard" not in rows
    assert len(lines) == 5


def test_a_metric_file_named_by_the_variable_wins(tmp_path: Path) -> None:
    lines = printed({"CLOUD_ML_HP_METRIC_FILE": str(tmp_path / "m.metrics")}).splitlines()
    assert lines[4].split(None, 2)[2] == f"{tmp_path / 'm.metrics'} (not written)"


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
    ],
)
def test_a_launched_replica_prints_nothing(environ: dict[str, str]) -> None:
    assert printed(environ) == ""


def test_the_tensorboard_line_comes_with_event_files_and_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    logs = tmp_path / "log dir"
    rows = [("model", str(tmp_path) + os.sep)]
    assert "tensorboard --logdir" not in summary(rows, str(logs))  # no folder
    (logs / "train").mkdir(parents=True)
    (logs / "train" / "notes.txt").write_text("x")
    assert "tensorboard --logdir" not in summary(rows, str(logs))  # a folder, no events
    (logs / "train" / "events.out.tfevents.1700000000.host.1.0").write_bytes(b"")
    hint = "(TensorBoard is not installed here: pip install tensorboard)"
    text = summary(rows, str(logs))
    assert (hint in text) == (importlib.util.find_spec("tensorboard") is None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    text = summary(rows, str(logs))
    assert text.splitlines()[-1] == f"tensorboard --logdir '{logs}'  {hint}"
    assert "vtrain[tensorflow]" not in text  # TensorBoard alone installs in any venv


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
        subprocess.run(
            [sys.executable, "train.py"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        for _ in range(2)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert "resumed from step None" in run.stdout, run.stdout  # each run starts fresh
        assert "outputs of this run:" in run.stdout


REPORT_SCRIPT = """
import vtrain
vtrain.hypertune.report(0.5, tag="loss")
vtrain.CheckpointManager().save(1, b"weights")
vtrain.print_outputs()
"""


def test_two_runs_alone_keep_everything_apart_in_folders_of_their_own(tmp_path: Path) -> None:
    # As the user types it, twice: `python train.py`, nothing set.
    import subprocess
    import sys

    (tmp_path / "train.py").write_text(REPORT_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIP_", "CLOUD_ML_"))}
    env.pop("VTRAIN_OUTPUT_DIR", None)
    folders = []
    for _ in range(2):
        run = subprocess.run(
            [sys.executable, "train.py"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        rows = {line.split()[0]: line.split() for line in run.stdout.splitlines()[1:]}
        metric = rows["tuning"][2]
        folder = metric.removesuffix("/hypertune/output.metrics")
        assert folder.startswith("vtrain-output/runs/") and folder != metric
        assert rows["checkpoints"][1] == f"{folder}/checkpoints/"
        assert '"loss": "0.5"' in (tmp_path / metric).read_text()  # the report landed there
        folders.append(folder)
    assert folders[0] != folders[1]
    assert sorted(p.name for p in (tmp_path / "vtrain-output").iterdir()) == ["runs"]


EVENTS_SCRIPT = """
import os, sys
if sys.argv[1:] == ["events"]:
    logs = os.environ["AIP_TENSORBOARD_LOG_DIR"]
    os.makedirs(os.path.join(logs, "train"), exist_ok=True)
    open(os.path.join(logs, "train", "events.out.tfevents.1.host"), "wb").close()
"""


@pytest.mark.parametrize("events", [False, True])
def test_a_local_job_ends_with_the_outputs_of_this_job(tmp_path: Path, events: bool) -> None:
    # As the user types it; the README shows this header. Before: rows with no header, and
    # a `tensorboard --logdir` line for an empty logs folder.
    import importlib.util
    import itertools
    import subprocess
    import sys

    job = tmp_path / "job"
    command = [
        sys.executable,
        "-m",
        "vtrain",
        "local",
        "run",
        "--output-dir",
        str(job),
        "--",
        sys.executable,
        "-c",
        EVENTS_SCRIPT,
        *(["events"] if events else []),
    ]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    after = done.stdout.split("outputs of this job:\n", 1)[1].splitlines()
    # Its rows are indented; what follows them (the rehearsal's verdict) is not.
    tail = list(itertools.takewhile(lambda line: line.startswith("  "), after))
    assert tail[0].split() == ["model", "job/model/", "(empty)"]  # relative to here
    assert [line.split()[0] for line in tail] == [
        "model",
        "checkpoints",
        "TensorBoard",
        "tuning",
        "replica",
        *(["tensorboard"] * events),
    ]
    if events:
        view = "  tensorboard --logdir job/logs/"
        if importlib.util.find_spec("tensorboard") is None:
            view += "  (TensorBoard is not installed here: pip install tensorboard)"
        assert tail[-1] == view
