"""Conditional parameters in a HyperparameterTuningJob: rendered as Vertex's
conditionalParameterSpecs, read back by the SDK, rehearsed with a trial's active parameters
only, as `vtrain tune` runs them; refused by AI Platform, naming why."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from conftest import Result

Run = Callable[..., Result]
IMAGE = ["--image", "gcr.io/p/t:1"]
STUDY = """\
metrics: [{metric_id: loss, goal: MINIMIZE}]
parameters:
  - parameter_id: optimizer
    categorical_value_spec: {values: [adam, sgd]}
    conditional_parameter_specs:
      - parent_categorical_values: {values: [sgd]}
        parameter_spec:
          parameter_id: momentum
          double_value_spec: {min_value: 0.0, max_value: 0.9}
  - parameter_id: layers
    integer_value_spec: {min_value: 1, max_value: 3}
    conditional_parameter_specs:
      - parent_int_values: {values: [3]}
        parameter_spec:
          parameter_id: width
          discrete_value_spec: {values: [16, 32]}
algorithm: RANDOM_SEARCH
max_trial_count: 6
"""


def test_the_tuning_job_carries_the_conditions_and_the_sdk_reads_them(
    vtrain: Run, tmp_path: Path
) -> None:
    from google.cloud import aiplatform_v1
    from google.protobuf.json_format import MessageToDict

    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    done = vtrain(
        "render",
        "vertex",
        "--name",
        "c",
        *IMAGE,
        "--study",
        str(study),
        "--format",
        "json",
        "--",
        "python",
        "t.py",
    )
    assert done.status == 0, done.err
    document = json.loads(done.out)
    message = aiplatform_v1.HyperparameterTuningJob.from_json(
        json.dumps(document), ignore_unknown_fields=False
    )
    assert MessageToDict(type(message).pb(message)) == document
    optimizer, layers = message.study_spec.parameters
    (momentum,) = optimizer.conditional_parameter_specs
    assert list(momentum.parent_categorical_values.values) == ["sgd"]
    assert momentum.parameter_spec.parameter_id == "momentum"
    assert momentum.parameter_spec.double_value_spec.max_value == 0.9
    (width,) = layers.conditional_parameter_specs
    assert list(width.parent_int_values.values) == [3]
    assert list(width.parameter_spec.discrete_value_spec.values) == [16.0, 32.0]


def test_rehearsed_trials_get_the_flags_vtrain_tune_gives(vtrain: Run, tmp_path: Path) -> None:
    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    job = tmp_path / "hp.json"
    assert (
        vtrain(
            "render",
            "vertex",
            "--name",
            "c",
            *IMAGE,
            "--study",
            str(study),
            "--format",
            "json",
            "-o",
            str(job),
            "--",
            "python",
            "t.py",
        ).status
        == 0
    )
    records = tmp_path / "records"
    records.mkdir()
    script = tmp_path / "trial.py"
    script.write_text(
        "import os, sys, json\n"
        "from vtrain.hypertune import report\n"
        f"open(os.path.join({str(records)!r}, os.environ['CLOUD_ML_TRIAL_ID']), 'w')"
        ".write(json.dumps(sys.argv[1:]))\n"
        "report(1.0)\n"
    )
    tuned = vtrain(
        "tune",
        "--study",
        str(study),
        "--output-dir",
        str(tmp_path / "tune"),
        "--",
        sys.executable,
        str(script),
    )
    assert tuned.status == 0, tuned.err
    local = {n: json.loads((records / str(n)).read_text()) for n in range(1, 7)}
    for flags in local.values():
        names = [flag.split("=")[0] for flag in flags]
        assert ("--momentum" in names) == ("--optimizer=sgd" in flags), flags
        assert ("--width" in names) == ("--layers=3" in flags), flags
    assert {"--optimizer=sgd", "--optimizer=adam"} <= {f for v in local.values() for f in v}
    for trial in (1, 2, 3):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "vtrain",
                "local",
                "run",
                "--job",
                str(job),
                "--trial",
                str(trial),
                "--output-dir",
                str(tmp_path / f"r{trial}"),
                "--",
                sys.executable,
                str(script),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        # The local command stands in for the job's program (`python t.py`); the trial's flags
        # follow, as `vtrain tune` gives them.
        rehearsed = json.loads((records / str(trial)).read_text())
        assert rehearsed == local[trial], (rehearsed, local[trial])


def test_ai_platform_refuses_conditions_naming_why(vtrain: Run, tmp_path: Path) -> None:
    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    done = vtrain(
        "render", "aiplatform", "--name", "c", *IMAGE, "--study", str(study), "--", "python", "t.py"
    )
    assert done.status == 2
    assert (
        f"{study}: parameters.optimizer.conditional_parameter_specs: AI Platform's "
        "HyperparameterSpec has no conditional parameters (got ['momentum'])" in done.err
    )
