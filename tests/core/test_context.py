"""The run context: directories laid out as baseOutputDirectory is, data, ids, metric file."""

from __future__ import annotations

import json
import os

import pytest

from vtrain import ConfigError, RunContext
from vtrain.context import metric_file_path, standalone_run_id
from vtrain.errors import ErrorList


def test_platform_directories_are_used_as_given() -> None:
    env = {
        "AIP_MODEL_DIR": "gs://b/out/3/model/",
        "AIP_CHECKPOINT_DIR": "gs://b/out/3/checkpoints/",
        "AIP_TENSORBOARD_LOG_DIR": "gs://b/out/3/logs/",
        "CLOUD_ML_TRIAL_ID": "3",
    }
    ctx = RunContext.from_env(env)
    assert ctx.dirs == {
        "model": "gs://b/out/3/model/",
        "checkpoint": "gs://b/out/3/checkpoints/",
        "tensorboard": "gs://b/out/3/logs/",
    }
    assert ctx.base_output_dir is None and ctx.trial_id == "3"


def test_local_defaults_mirror_the_platform_layout(tmp_path: os.PathLike[str]) -> None:
    ctx = RunContext.from_env({"VTRAIN_OUTPUT_DIR": str(tmp_path)})
    assert ctx.model_dir == os.path.join(tmp_path, "model") + os.sep
    assert ctx.checkpoint_dir == os.path.join(tmp_path, "checkpoints") + os.sep
    assert ctx.tensorboard_dir == os.path.join(tmp_path, "logs") + os.sep
    trial = RunContext.from_env({"VTRAIN_OUTPUT_DIR": str(tmp_path), "CLOUD_ML_TRIAL_ID": "12"})
    assert trial.model_dir == os.path.join(tmp_path, "12", "model") + os.sep
    # A trial id from CLUSTER_SPEC is passed in, and wins.
    passed = RunContext.from_env({"VTRAIN_OUTPUT_DIR": str(tmp_path)}, trial_id="5")
    assert passed.checkpoint_dir == os.path.join(tmp_path, "5", "checkpoints") + os.sep


def test_defaults_fill_only_what_the_platform_left_unset(tmp_path: os.PathLike[str]) -> None:
    ctx = RunContext.from_env(
        {"AIP_MODEL_DIR": "/gcs/b/model/", "VTRAIN_OUTPUT_DIR": str(tmp_path)}
    )
    assert ctx.model_dir == "/gcs/b/model/"
    assert ctx.checkpoint_dir.startswith(str(tmp_path))


def test_the_rest_of_the_job_facts() -> None:
    env = {
        "AIP_TRAINING_DATA_URI": "gs://b/data/training-*.jsonl",
        "AIP_VALIDATION_DATA_URI": "gs://b/data/validation-*.jsonl",
        "AIP_TEST_DATA_URI": "bq://p.d.test",
        "AIP_DATA_FORMAT": "jsonl",
        "CLOUD_ML_PROJECT_ID": "123456789012",
        "CLOUD_ML_JOB_ID": "job-1",
        "CLOUD_ML_REGION": "us-central1",
        "CLOUD_ML_HP_METRIC_FILE": "/tmp/m/out.metrics",
        "CLOUD_ML_HP_METRIC_TAG": "accuracy",
    }
    ctx = RunContext.from_env(env)
    assert ctx.training_data_uri == "gs://b/data/training-*.jsonl"
    assert ctx.validation_data_uri == "gs://b/data/validation-*.jsonl"
    assert ctx.test_data_uri == "bq://p.d.test"
    assert (ctx.data_format, ctx.project_number) == ("jsonl", "123456789012")
    assert (ctx.job_id, ctx.region) == ("job-1", "us-central1")
    assert (ctx.metric_file, ctx.metric_tag) == ("/tmp/m/out.metrics", "accuracy")
    default = RunContext.from_env({})
    assert default.metric_tag == "training/hptuning/metric"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"AIP_DATA_FORMAT": "parquet"}, r"AIP_DATA_FORMAT: unknown data format \(got 'parquet'\)"),
        ({"CLOUD_ML_PROJECT_ID": "my-project"}, r"CLOUD_ML_PROJECT_ID: not a project number"),
        ({"CLOUD_ML_TRIAL_ID": ".."}, r"CLOUD_ML_TRIAL_ID: trial id is not a plain folder name"),
    ],
)
def test_bad_values_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RunContext.from_env(env)


def test_a_trial_id_passed_in_cannot_climb_out_of_the_base(tmp_path: os.PathLike[str]) -> None:
    with pytest.raises(ConfigError, match=r"trial_id: trial id is not a plain folder name"):
        RunContext.from_env({"VTRAIN_OUTPUT_DIR": str(tmp_path)}, trial_id="../../etc")


def test_several_bad_values_are_reported_together() -> None:
    with pytest.raises(ErrorList) as caught:
        RunContext.from_env({"AIP_DATA_FORMAT": "xml", "CLOUD_ML_PROJECT_ID": "p"})
    assert "AIP_DATA_FORMAT" in str(caught.value) and "CLOUD_ML_PROJECT_ID" in str(caught.value)
    assert len(caught.value.errors) == 2


@pytest.mark.parametrize(
    "variable",
    [
        # Vertex puts the trial in CLUSTER_SPEC on every trial; a trial may lack CLOUD_ML_TRIAL_ID.
        "CLUSTER_SPEC",
        # AI Platform and `gcloud ai-platform local train` put it in TF_CONFIG.
        "TF_CONFIG",
    ],
)
def test_the_trial_comes_from_the_cluster_when_not_passed(
    variable: str, tmp_path: os.PathLike[str]
) -> None:
    document = {
        "cluster": {"chief": ["127.0.0.1:2222"]},
        "task": {"type": "chief", "index": 0, "trial": "3"},
        "environment": "cloud",
    }
    if variable == "CLUSTER_SPEC":
        document["cluster"] = {"workerpool0": ["127.0.0.1:2222"]}
        document["task"] = {"type": "workerpool0", "index": 0, "trial": "3"}
    ctx = RunContext.from_env({variable: json.dumps(document), "VTRAIN_OUTPUT_DIR": str(tmp_path)})
    assert ctx.trial_id == "3"
    for folder in ("model", "checkpoints", "logs"):
        assert os.path.join(tmp_path, "3", folder) + os.sep in ctx.dirs.values()


def test_a_cluster_that_cannot_be_read_is_reported_with_the_rest() -> None:
    env = {"CLOUD_ML_TRIAL_ID": "..", "AIP_DATA_FORMAT": "xml"}
    with pytest.raises(ErrorList) as caught:
        RunContext.from_env(env)
    assert "CLOUD_ML_TRIAL_ID" in str(caught.value) and "AIP_DATA_FORMAT" in str(caught.value)


@pytest.mark.parametrize(
    ("env", "own_folder"),
    [
        ({}, True),  # `python train.py` alone: nothing says which job it is
        ({"VTRAIN_OUTPUT_DIR": "out"}, False),  # `vtrain local run`, or chosen by hand
        ({"AIP_CHECKPOINT_DIR": "/gcs/b/checkpoints/"}, False),  # the platform's job
        ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1"}, False),
        ({"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "h", "MASTER_PORT": "1"}, True),
        ({"CLOUD_ML_TRIAL_ID": "4"}, False),  # a trial's folder is already its own
        # Data to try the script on, set by hand: no job, so no shared checkpoints either.
        ({"AIP_TRAINING_DATA_URI": "data/*.jsonl"}, True),
        ({"AIP_DATA_FORMAT": "jsonl"}, True),
        ({"AIP_VALIDATION_DATA_URI": "v/*.csv", "AIP_TEST_DATA_URI": "t/*.csv"}, True),
    ],
)
def test_only_a_standalone_run_gets_checkpoints_of_its_own(
    env: dict[str, str],
    own_folder: bool,
    tmp_path: os.PathLike[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A second `python train.py` must not resume the first one's steps; a restarted job must.
    monkeypatch.chdir(tmp_path)
    first = RunContext.from_env(env)
    assert RunContext.from_env(env) == first  # one folder for the whole run
    runs = os.path.join(os.path.realpath(tmp_path), "vtrain-output", "runs") + os.sep
    folder = os.path.join(runs, standalone_run_id())
    assert first.checkpoint_dir.startswith(runs) is own_folder
    if own_folder:  # all of it, in one folder: model, checkpoints, logs and the metric
        assert first.base_output_dir == folder
        assert first.dirs == {
            "model": f"{folder}/model/",
            "checkpoint": f"{folder}/checkpoints/",
            "tensorboard": f"{folder}/logs/",
        }
        assert first.metric_file == f"{folder}/hypertune/output.metrics"
        assert metric_file_path(env) == first.metric_file  # where report() writes
    else:
        assert not first.metric_file.startswith(runs)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        # The platform's path whenever a platform or a launcher started the process: the
        # tuning service reads it there, whether or not it set the variable.
        ({"CLOUD_ML_JOB_ID": "j", "CLOUD_ML_TRIAL_ID": "3"}, "/tmp/hypertune/output.metrics"),
        (
            {
                "CLUSTER_SPEC": json.dumps(
                    {
                        "cluster": {"workerpool0": ["h:1"]},
                        "task": {"type": "workerpool0", "index": 0},
                    }
                )
            },
            "/tmp/hypertune/output.metrics",
        ),
        (
            {
                "TF_CONFIG": json.dumps(
                    {
                        "cluster": {"chief": ["h:1"], "worker": ["w:1"]},
                        "task": {"type": "chief", "index": 0},
                    }
                )
            },
            "/tmp/hypertune/output.metrics",
        ),
        ({"CLOUD_ML_TRIAL_ID": "4"}, "/tmp/hypertune/output.metrics"),
        ({"CLOUD_ML_HP_METRIC_FILE": "/m/x.metrics"}, "/m/x.metrics"),
        ({"CLOUD_ML_HP_METRIC_FILE": "/m/x.metrics", "CLOUD_ML_JOB_ID": "j"}, "/m/x.metrics"),
        # Set by hand to resume a run alone on purpose: that folder is the run's.
        ({"VTRAIN_OUTPUT_DIR": "/o"}, "/o/hypertune/output.metrics"),
    ],
)
def test_the_metric_file_stays_where_the_platform_reads_it(
    env: dict[str, str], expected: str
) -> None:
    assert metric_file_path(env) == expected
    assert RunContext.from_env(env).metric_file == expected
