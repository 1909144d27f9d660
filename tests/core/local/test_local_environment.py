"""The environment each platform gives a local replica, checked against the platform reference."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from vtrain.local import Plan, replica_env

PY = [sys.executable, "-c", "pass"]
PARENT = {
    "PATH": "/usr/bin",
    "HOME": "/home/me",
    # What a parent shell inside a job, or a test, may have exported: none of it may leak.
    "TF_CONFIG": '{"leak": 1}',
    "CLUSTER_SPEC": '{"leak": 1}',
    "RANK": "99",
    "MASTER_ADDR": "leak",
    "AIP_MODEL_DIR": "gs://leak/",
    "CLOUD_ML_TRIAL_ID": "leak",
    "TORCHELASTIC_RUN_ID": "leak",
    "PET_NNODES": "9",
    # A process that configured MXNet: its plugin listed the variables it set.
    "DMLC_ROLE": "leak",
    "DMLC_INTERFACE": "lo",
    "VTRAIN_FRAMEWORK_VARIABLES": "DMLC_ROLE",
}


def envs(**options: Any) -> dict[str, dict[str, str]]:
    """Every replica's environment, by replica name (ports 1001, 1002, … in rank order)."""
    plan = Plan.from_options(PY, output_dir="/out", job_id="job7", **options)
    replicas = plan.replicas([1001 + i for i in range(plan.size)])
    return {r.name: replica_env(plan, replicas, r, environ=PARENT) for r in replicas}


def doc(env: dict[str, str], name: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(env[name])
    return value


def test_every_platform_has_its_writer() -> None:
    from vtrain.local.environment import WRITERS
    from vtrain.local.plan import PLATFORMS

    assert tuple(WRITERS) == PLATFORMS


def test_nothing_platform_specific_is_inherited() -> None:
    for platform in ("vertex", "aiplatform", "kubeflow", "torchrun"):
        for env in envs(platform=platform, workers=1).values():
            assert env["PATH"] == "/usr/bin" and env["HOME"] == "/home/me"
            assert "leak" not in json.dumps(env)
            assert "PET_NNODES" not in env and "DMLC_ROLE" not in env
            assert env["DMLC_INTERFACE"] == "lo"  # the user's choice of interface


def test_vertex_distributed() -> None:
    all_envs = envs(workers=2, ps=1, evaluators=1)
    pools = {
        "workerpool0": ["127.0.0.1:1001"],
        "workerpool1": ["127.0.0.1:1002", "127.0.0.1:1003"],
        "workerpool2": ["127.0.0.1:1004"],
        "workerpool3": ["127.0.0.1:1005"],
    }
    tf_cluster = {
        "chief": ["127.0.0.1:1001"],
        "worker": ["127.0.0.1:1002", "127.0.0.1:1003"],
        "ps": ["127.0.0.1:1004"],
    }
    expected = {
        "chief-0": ("workerpool0", 0, "chief", "0"),
        "worker-0": ("workerpool1", 0, "worker", "1"),
        "worker-1": ("workerpool1", 1, "worker", "2"),
        "ps-0": ("workerpool2", 0, "ps", None),
        "evaluator-0": ("workerpool3", 0, "evaluator", None),
    }
    for name, (pool, index, tf_type, rank) in expected.items():
        env = all_envs[name]
        spec = doc(env, "CLUSTER_SPEC")
        assert spec["cluster"] == pools
        assert spec["task"] == {"type": pool, "index": index, "trial": ""}
        assert spec["environment"] == "cloud"
        counts = [p.get("replicaCount") for p in spec["job"]["workerPoolSpecs"]]
        assert counts == ["1", "2", "1", "1"]
        tf = doc(env, "TF_CONFIG")
        assert tf["cluster"] == tf_cluster  # the evaluator is never inside
        assert tf["task"]["type"] == tf_type and tf["task"]["index"] == index
        assert env.get("RANK") == rank
        if rank is not None:
            assert env["MASTER_ADDR"] == "127.0.0.1" and env["MASTER_PORT"] == "1001"
            assert env["WORLD_SIZE"] == "3"
        else:
            assert "MASTER_ADDR" not in env and "WORLD_SIZE" not in env
        assert env["AIP_MODEL_DIR"] == "/out/model/"
        assert env["AIP_CHECKPOINT_DIR"] == "/out/checkpoints/"
        assert env["AIP_TENSORBOARD_LOG_DIR"] == "/out/logs/"
        assert env["CLOUD_ML_PROJECT_ID"].isdigit()
        assert env["CLOUD_ML_JOB_ID"] == "job7"
        assert "CLOUD_ML_TRIAL_ID" not in env
        assert env["CLOUD_ML_HP_METRIC_FILE"] == f"/out/hypertune/{name}.metrics"


def test_vertex_single_replica_has_no_tf_config() -> None:
    env = envs()["chief-0"]
    assert doc(env, "CLUSTER_SPEC")["cluster"] == {"workerpool0": ["127.0.0.1:1001"]}
    assert "TF_CONFIG" not in env and "RANK" not in env and "MASTER_ADDR" not in env


def test_vertex_skipped_pool_keeps_its_place() -> None:
    spec = doc(envs(evaluators=1)["evaluator-0"], "CLUSTER_SPEC")
    assert set(spec["cluster"]) == {"workerpool0", "workerpool3"}
    assert spec["job"]["workerPoolSpecs"][1:3] == [{}, {}]
    tf = doc(envs(evaluators=1)["evaluator-0"], "TF_CONFIG")
    assert tf["cluster"] == {"chief": ["127.0.0.1:1001"]}
    assert tf["task"]["type"] == "evaluator"


def test_vertex_trial_lays_out_the_trial_folder() -> None:
    env = envs(workers=1, trial_id="3")["worker-0"]
    assert env["AIP_MODEL_DIR"] == "/out/3/model/"
    assert env["AIP_CHECKPOINT_DIR"] == "/out/3/checkpoints/"
    assert env["AIP_TENSORBOARD_LOG_DIR"] == "/out/3/logs/"
    assert env["CLOUD_ML_TRIAL_ID"] == "3"
    assert env["CLOUD_ML_HP_METRIC_FILE"] == "/out/3/hypertune/worker-0.metrics"
    assert doc(env, "CLUSTER_SPEC")["task"]["trial"] == "3"
    assert doc(env, "TF_CONFIG")["task"]["trial"] == "3"


@pytest.mark.parametrize(
    ("options", "tf_chief"),
    [({}, "master"), ({"use_chief": True}, "chief"), ({"evaluators": 1}, "chief")],
)
def test_aiplatform(options: dict[str, Any], tf_chief: str) -> None:
    all_envs = envs(platform="aiplatform", workers=1, ps=1, **options)
    chief = all_envs["chief-0"]
    spec = doc(chief, "CLUSTER_SPEC")
    assert spec["task"] == {"type": "master", "index": 0, "trial": ""}
    assert spec["cluster"]["master"] == ["127.0.0.1:1001"]
    assert spec["cluster"]["worker"] == ["127.0.0.1:1002"]
    assert spec["cluster"]["ps"] == ["127.0.0.1:1003"]
    assert spec["job"]["useChiefInTfConfig"] is bool(options.get("use_chief"))
    tf = doc(chief, "TF_CONFIG")
    assert tf["task"]["type"] == tf_chief
    assert tf["cluster"] == {
        tf_chief: ["127.0.0.1:1001"],
        "worker": ["127.0.0.1:1002"],
        "ps": ["127.0.0.1:1003"],
    }
    assert doc(all_envs["worker-0"], "TF_CONFIG")["task"] == {
        "type": "worker",
        "index": 0,
        "trial": "",
    }
    assert "AIP_MODEL_DIR" not in chief and chief["VTRAIN_OUTPUT_DIR"] == "/out"
    assert chief["CLOUD_ML_JOB_ID"] == "job7"
    if "evaluators" in options:
        ev = all_envs["evaluator-0"]
        assert doc(ev, "CLUSTER_SPEC")["task"]["type"] == "evaluator"
        assert doc(ev, "CLUSTER_SPEC")["cluster"]["evaluator"] == ["127.0.0.1:1004"]
        assert doc(ev, "TF_CONFIG")["task"]["type"] == "evaluator"
        assert "evaluator" not in doc(ev, "TF_CONFIG")["cluster"]


def test_aiplatform_single_replica_still_has_tf_config() -> None:
    tf = doc(envs(platform="aiplatform")["chief-0"], "TF_CONFIG")
    assert tf["cluster"] == {"master": ["127.0.0.1:1001"]}


def test_kubeflow() -> None:
    all_envs = envs(platform="kubeflow", workers=1, ps=1, evaluators=1)
    cluster = {
        "chief": ["127.0.0.1:1001"],
        "worker": ["127.0.0.1:1002"],
        "ps": ["127.0.0.1:1003"],
        "evaluator": ["127.0.0.1:1004"],  # TFJob keeps every role in the cluster
    }
    for name, env in all_envs.items():
        role, index = name.split("-")
        tf = doc(env, "TF_CONFIG")
        assert tf == {
            "cluster": cluster,
            "task": {"type": role, "index": int(index)},
            "environment": "cloud",
        }
        assert "CLUSTER_SPEC" not in env and "AIP_MODEL_DIR" not in env
        assert "CLOUD_ML_JOB_ID" not in env
    assert {n: e.get("RANK") for n, e in all_envs.items()} == {
        "chief-0": "0",
        "worker-0": "1",
        "ps-0": None,
        "evaluator-0": None,
    }
    assert all_envs["worker-0"]["WORLD_SIZE"] == "2"
    assert all_envs["worker-0"]["MASTER_PORT"] == "1001"


def test_kubeflow_single_replica() -> None:
    env = envs(platform="kubeflow")["chief-0"]
    assert "TF_CONFIG" not in env
    assert (env["RANK"], env["WORLD_SIZE"], env["MASTER_PORT"]) == ("0", "1", "1001")


def test_torchrun() -> None:
    plan = Plan.from_options(PY, platform="torchrun", workers=2, output_dir="/out", job_id="j")
    replicas = plan.replicas([2001, 2002, 2003])
    env = replica_env(plan, replicas, replicas[2], restarts=2, environ=PARENT)
    assert {
        k: env[k]
        for k in (
            "RANK",
            "LOCAL_RANK",
            "WORLD_SIZE",
            "LOCAL_WORLD_SIZE",
            "GROUP_RANK",
            "ROLE_RANK",
            "ROLE_WORLD_SIZE",
            "MASTER_ADDR",
            "MASTER_PORT",
            "TORCHELASTIC_RUN_ID",
            "TORCHELASTIC_RESTART_COUNT",
        )
    } == {
        "RANK": "2",
        "LOCAL_RANK": "2",
        "WORLD_SIZE": "3",
        "LOCAL_WORLD_SIZE": "3",
        "GROUP_RANK": "0",
        "ROLE_RANK": "2",
        "ROLE_WORLD_SIZE": "3",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "2001",
        "TORCHELASTIC_RUN_ID": "j",
        "TORCHELASTIC_RESTART_COUNT": "2",
    }
    assert "TF_CONFIG" not in env and "CLUSTER_SPEC" not in env


def test_the_metric_tag_chosen_by_the_study_reaches_every_replica() -> None:
    from vtrain.local.environment import inherited

    kept = inherited({"CLOUD_ML_HP_METRIC_TAG": "accuracy", "CLOUD_ML_TRIAL_ID": "9", "PATH": "/b"})
    assert kept == {"CLOUD_ML_HP_METRIC_TAG": "accuracy", "PATH": "/b"}


def test_the_dataset_variables_reach_every_replica_and_the_dirs_do_not() -> None:
    from vtrain.local.environment import inherited

    data = {"AIP_TRAINING_DATA_URI": "gs://b/train-*", "AIP_DATA_FORMAT": "csv"}
    kept = inherited({**data, "AIP_MODEL_DIR": "gs://b/model/", "AIP_CHECKPOINT_DIR": "/c"})
    assert kept == data


def test_a_parents_source_override_does_not_reach_the_replicas() -> None:
    from vtrain.local.environment import inherited

    # "single" in the parent's shell would make every replica its own chief.
    assert inherited({"VTRAIN_CLUSTER_SOURCE": "single", "PATH": "/b"}) == {"PATH": "/b"}


@pytest.mark.parametrize(
    ("name", "env", "family"),
    [
        ("torch-distributed", {}, "torch"),
        ("deepspeed-distributed", {}, "torch"),
        ("xgboost-distributed", {}, "xgboost"),
        ("vtrain-tensorflow", {"VTRAIN_TRAINJOB_LAYOUT": "{}"}, "vtrain"),
        ("team-runtime", {"VTRAIN_TRAINJOB_LAYOUT": "{}"}, "vtrain"),  # the layout decides
        ("team-xgboost", {}, None),  # not known by its name: never guessed
        (None, {}, None),  # no manifest
    ],
)
def test_a_trainjob_s_runtime_is_known_by_its_name_or_its_layout(
    name: str | None, env: dict[str, str], family: str | None
) -> None:
    from vtrain.local.writers.trainjob import runtime_family

    assert runtime_family(name, env) == family


def test_a_trainjob_node_gets_its_index_and_what_its_runtime_sets() -> None:
    job = {"spec": {"runtimeRef": {"name": "xgboost-distributed"}, "trainer": {"numNodes": 2}}}
    xgb = envs(platform="trainjob", workers=1, job=job, job_kind="TrainJob")
    runtime = ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER")
    assert {
        k: v for k, v in xgb["worker-0"].items() if k in (*runtime, "JOB_COMPLETION_INDEX")
    } == {
        "JOB_COMPLETION_INDEX": "1",
        "DMLC_TRACKER_URI": "127.0.0.1",
        "DMLC_TRACKER_PORT": "1001",
        "DMLC_TASK_ID": "1",
        "DMLC_NUM_WORKER": "2",
    }
    assert not any(k.startswith("PET_") or k == "VTRAIN_TRAINJOB_LAYOUT" for k in xgb["worker-0"])
    # No manifest: every runtime's variables that fit, the layout with each node's address.
    alone = envs(platform="trainjob", workers=1, ps=1)
    layout = json.loads(alone["ps-0"]["VTRAIN_TRAINJOB_LAYOUT"])
    assert layout == {
        "chief": 1,
        "worker": 1,
        "ps": 1,
        "port": 1001,
        "addresses": ["127.0.0.1:1001", "127.0.0.1:1002", "127.0.0.1:1003"],
    }
    assert alone["ps-0"]["JOB_COMPLETION_INDEX"] == "2" and "PET_NNODES" not in alone["ps-0"]
    assert all("leak" not in json.dumps(env) for env in (*xgb.values(), *alone.values()))
