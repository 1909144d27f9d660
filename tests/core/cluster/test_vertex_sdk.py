"""The environments of the Vertex SDK's own training_utils tests, read as the SDK reads them.

The SDK (google-cloud-aiplatform, `training_utils.environment_variables` and its
TensorFlow profiler plugin) takes the AIP_* variables as they are, treats a
CLUSTER_SPEC without a cluster as none, lists every pool's replicas as the
cluster's hosts, and calls a task chief when it is `workerpool0`/`chief` index 0.
The cases are written from the SDK's public unit tests (tests/unit/aiplatform/
test_training_utils.py), not copied from them.
"""

from __future__ import annotations

import json

import pytest

from vtrain import ClusterInfo, RunContext

# The SDK's fixture spells the cluster as a list of pools with positions.
SDK_CLUSTER_SPEC = {
    "cluster": {
        "worker_pools": [
            {"index": 0, "replicas": ["training-workerpool0-ab-0:2222"]},
            {
                "index": 1,
                "replicas": ["training-workerpool1-ab-0:2222", "training-workerpool1-ab-1:2222"],
            },
        ]
    },
    "environment": "cloud",
    "task": {"worker_pool_index": 0, "replica_index": 0, "trial": "TRIAL_ID"},
}
SDK_ENV = {
    "AIP_TRAINING_DATA_URI": "gs://training-data-uri",
    "AIP_VALIDATION_DATA_URI": "gs://test-validation-data-uri",
    "AIP_TEST_DATA_URI": "gs://test-data-uri",
    "AIP_MODEL_DIR": "gs://test-model-dir",
    "AIP_CHECKPOINT_DIR": "gs://test-checkpoint-dir",
    "AIP_TENSORBOARD_LOG_DIR": "gs://test-tensorboard-log-dir",
    "CLUSTER_SPEC": json.dumps(SDK_CLUSTER_SPEC),
}


def sdk_hosts(spec: dict[str, object]) -> list[str] | None:
    """The SDK profiler's reading: every pool's replicas, or None without a cluster."""
    cluster = spec.get("cluster") or {}
    if not cluster:
        return None
    assert isinstance(cluster, dict)
    return [a for replicas in cluster.values() for a in replicas]


def sdk_is_chief(spec: dict[str, object]) -> bool:
    """The SDK profiler's chief: task type workerpool0 or chief, index 0."""
    task = spec.get("task") or {}
    assert isinstance(task, dict)
    return task.get("type", "") in {"workerpool0", "chief"} and task.get("index", -1) == 0


def test_the_sdk_fixture_is_read_as_the_sdk_reads_it() -> None:
    context = RunContext.from_env(SDK_ENV)
    assert (context.training_data_uri, context.validation_data_uri, context.test_data_uri) == (
        "gs://training-data-uri",
        "gs://test-validation-data-uri",
        "gs://test-data-uri",
    )
    # The directories are taken as they are: the platform already made them per trial.
    assert context.dirs == {
        "model": "gs://test-model-dir",
        "checkpoint": "gs://test-checkpoint-dir",
        "tensorboard": "gs://test-tensorboard-log-dir",
    }
    info = ClusterInfo.from_env(SDK_ENV)
    assert (info.platform, info.role, info.index, info.is_chief) == ("vertex", "chief", 0, True)
    assert info.trial_id == "TRIAL_ID"
    assert info.cluster["worker"] == (
        "training-workerpool1-ab-0:2222",
        "training-workerpool1-ab-1:2222",
    )


def named(pools: dict[str, list[str]], task_type: str, index: int) -> dict[str, object]:
    return {"cluster": pools, "task": {"type": task_type, "index": index}, "environment": "cloud"}


POOLS = {"workerpool0": ["c:2222"], "workerpool1": ["w0:2222", "w1:2222"], "workerpool2": ["p:1"]}


@pytest.mark.parametrize(
    "spec",
    [
        named(POOLS, "workerpool0", 0),
        named(POOLS, "workerpool1", 0),
        named(POOLS, "workerpool1", 1),
        named(POOLS, "workerpool2", 0),
        named({"workerpool0": ["c:2222"]}, "workerpool0", 0),
        named({}, "workerpool0", 0),
        {"cluster": {}, "task": {}},
        {},
    ],
    ids=lambda s: json.dumps(s)[:60],
)
def test_hosts_and_chief_agree_with_the_sdks_reading(spec: dict[str, object]) -> None:
    info = ClusterInfo.from_env({"CLUSTER_SPEC": json.dumps(spec)})
    hosts = sdk_hosts(spec)
    if hosts is None:
        assert info == ClusterInfo.single()
        return
    mine = [a for replicas in info.cluster.values() for a in replicas]
    assert sorted(mine) == sorted(hosts)
    assert info.is_chief == sdk_is_chief(spec)


def test_no_cluster_spec_at_all_is_one_process() -> None:
    assert ClusterInfo.from_env({}) == ClusterInfo.single()
    assert RunContext.from_env({"AIP_MODEL_DIR": "gs://m"}).model_dir == "gs://m"
