"""Every malformed input names the variable, the JSON path, the value and what was expected."""

from __future__ import annotations

import json

import pytest
from platform_examples import AIP_CLUSTER, VERTEX_CLUSTER, cluster_spec, tf_config

from vtrain import ClusterInfo, ConfigError, ConflictError, UsageError

ONE_CHIEF = {"workerpool0": ["c:2222"], "workerpool1": ["w0:2222", "w1:2222"]}

BAD = [
    ("invalid JSON", {"CLUSTER_SPEC": '{"cluster": '}, r"CLUSTER_SPEC: not valid JSON"),
    ("not an object", {"CLUSTER_SPEC": "[1, 2]"}, r"CLUSTER_SPEC: not a JSON object"),
    ("no task", {"CLUSTER_SPEC": json.dumps({"cluster": ONE_CHIEF})}, r"missing key 'task'"),
    (
        "no task type",
        {"CLUSTER_SPEC": json.dumps({"cluster": ONE_CHIEF, "task": {}})},
        r"missing key 'task.type'",
    ),
    (
        "task type not a string",
        {"CLUSTER_SPEC": cluster_spec(ONE_CHIEF, 1, 0)},  # type: ignore[arg-type]
        r"CLUSTER_SPEC: task.type: not a string \(got 1\)",
    ),
    (
        "index not an integer",
        {"CLUSTER_SPEC": cluster_spec(ONE_CHIEF, "workerpool1", "1x")},  # type: ignore[arg-type]
        r"CLUSTER_SPEC: task.index: not a non-negative integer \(got '1x'\)",
    ),
    (
        "negative index",
        {"CLUSTER_SPEC": cluster_spec(ONE_CHIEF, "workerpool1", -1)},
        r"task.index: not a non-negative integer \(got -1\)",
    ),
    (
        "boolean index",
        {"CLUSTER_SPEC": cluster_spec(ONE_CHIEF, "workerpool1", True)},  # type: ignore[arg-type]
        r"task.index: not a non-negative integer \(got True\)",
    ),
    (
        "index out of range",
        {"CLUSTER_SPEC": cluster_spec(ONE_CHIEF, "workerpool1", 3)},
        r'CLUSTER_SPEC: task.index: 3 is out of range for role "workerpool1" \(2 replicas\)',
    ),
    (
        "task type absent",
        {"CLUSTER_SPEC": cluster_spec(ONE_CHIEF, "workerpool3", 0)},
        r'task.type: task type "workerpool3" is not in the cluster',
    ),
    (
        "unknown pool",
        {"CLUSTER_SPEC": cluster_spec({**ONE_CHIEF, "workerpool4": ["x:1"]}, "workerpool0", 0)},
        r"CLUSTER_SPEC: cluster.workerpool4: unknown role",
    ),
    (
        "unknown AI Platform role",
        {"CLUSTER_SPEC": cluster_spec(AIP_CLUSTER, "boss", 0)},
        r"task.type: unknown role \(got 'boss'\); expected one of 'chief', 'master'",
    ),
    (
        "two chiefs",
        {"CLUSTER_SPEC": cluster_spec({"workerpool0": ["a:1", "b:1"]}, "workerpool0", 0)},
        r"cluster.workerpool0: 2 chiefs",
    ),
    (
        "master and chief",
        {"CLUSTER_SPEC": cluster_spec({"master": ["a:1"], "chief": ["b:1"]}, "master", 0)},
        r"2 chiefs",
    ),
    (
        "address without port",
        {"CLUSTER_SPEC": cluster_spec({"workerpool0": ["host"]}, "workerpool0", 0)},
        r"cluster.workerpool0\[0\]: address has no port \(got 'host'\)",
    ),
    (
        "port out of range",
        {"CLUSTER_SPEC": cluster_spec({"workerpool0": ["host:70000"]}, "workerpool0", 0)},
        r"cluster.workerpool0\[0\]: bad port \(got 'host:70000'\); expected host:port",
    ),
    (
        "port not a number",
        {"CLUSTER_SPEC": cluster_spec({"workerpool0": ["host:http"]}, "workerpool0", 0)},
        r"bad port",
    ),
    (
        "unbracketed IPv6",
        {"CLUSTER_SPEC": cluster_spec({"workerpool0": ["::1:80"]}, "workerpool0", 0)},
        r"malformed host \(IPv6 addresses need brackets\)",
    ),
    (
        "addresses not a list",
        {"CLUSTER_SPEC": cluster_spec({"workerpool0": "c:1"}, "workerpool0", 0)},
        r"cluster.workerpool0: not a list of addresses",
    ),
    (
        "no trainer",
        {"CLUSTER_SPEC": cluster_spec({"workerpool2": ["p:1"]}, "workerpool2", 0)},
        r"no chief and no worker",
    ),
    (
        "same address twice",
        {
            "CLUSTER_SPEC": cluster_spec(
                {"workerpool0": ["a:1"], "workerpool1": ["a:1"]}, "workerpool1", 0
            )
        },
        r"address used by two replicas \(cluster.workerpool0\[0\] and cluster.workerpool1\[0\]\)",
    ),
    (
        "job not JSON",
        {"CLUSTER_SPEC": cluster_spec(ONE_CHIEF, "workerpool0", 0, job="{oops")},
        r"CLUSTER_SPEC: job: not valid JSON",
    ),
    (
        "pool specs not a list",
        {"CLUSTER_SPEC": cluster_spec(ONE_CHIEF, "workerpool0", 0, job={"workerPoolSpecs": 3})},
        r"job.workerPoolSpecs: not a list",
    ),
    (
        "trial escapes a folder",
        {"CLUSTER_SPEC": cluster_spec(ONE_CHIEF, "workerpool0", 0, trial="../../etc")},
        r"CLUSTER_SPEC: task.trial: trial id is not a plain folder name \(got '../../etc'\)",
    ),
    ("TF_CONFIG invalid", {"TF_CONFIG": "{'cluster': 1}"}, r"TF_CONFIG: not valid JSON"),
    (
        "sparse TF_CONFIG without this task",
        {
            "TF_CONFIG": json.dumps(
                {
                    "cluster": {"worker": {"1": "w1:1", "3": "w3:1"}},
                    "task": {"type": "worker", "index": 2},
                }
            )
        },
        r'TF_CONFIG: task.index: task 2 of role "worker" is not listed in the sparse cluster '
        r"\(got 2\); expected the index of a listed task: 1, 3",
    ),
    (
        "TF_CONFIG without task",
        {"TF_CONFIG": json.dumps({"cluster": {"worker": ["w:1"]}})},
        r"TF_CONFIG: missing key 'task.type'",
    ),
    (
        "TF_CONFIG bad role",
        {"TF_CONFIG": tf_config({"worker": ["w:1"]}, "trainer", 0)},
        r"TF_CONFIG: task.type: unknown role \(got 'trainer'\)",
    ),
    (
        "TF_CONFIG sparse index",
        {"TF_CONFIG": tf_config({"worker": {"a": "w:1"}}, "worker", 0)},
        r"cluster.worker.a: not a non-negative integer",
    ),
    (
        "TF_CONFIG huge sparse index",
        {"TF_CONFIG": tf_config({"worker": {"99999999": "w:1"}}, "worker", 0)},
        r"replica index is implausibly large",
    ),
    (
        "torchrun without RANK",
        {"TORCHELASTIC_RUN_ID": "x", "WORLD_SIZE": "2"},
        r"RANK: is not set, but TORCHELASTIC_RUN_ID is set",
    ),
    (
        "torchrun rank out of range",
        {
            "TORCHELASTIC_RUN_ID": "x",
            "WORLD_SIZE": "2",
            "RANK": "2",
            "MASTER_ADDR": "h",
            "MASTER_PORT": "1",
        },
        r"RANK: 2 is out of range for WORLD_SIZE 2",
    ),
    (
        "torchrun local rank out of range",
        {
            "TORCHELASTIC_RUN_ID": "x",
            "WORLD_SIZE": "2",
            "RANK": "1",
            "LOCAL_RANK": "2",
            "LOCAL_WORLD_SIZE": "2",
            "MASTER_ADDR": "h",
            "MASTER_PORT": "1",
        },
        r"LOCAL_RANK: 2 is out of range for LOCAL_WORLD_SIZE 2",
    ),
    (
        "WORLD_SIZE not a number",
        {"WORLD_SIZE": "two", "RANK": "0"},
        r"WORLD_SIZE: not an integer \(got 'two'\)",
    ),
    ("WORLD_SIZE zero", {"WORLD_SIZE": "0", "RANK": "0"}, r"expected an integer >= 1"),
    (
        "no MASTER_ADDR",
        {"WORLD_SIZE": "2", "RANK": "1", "MASTER_PORT": "1"},
        r"MASTER_ADDR: is not set",
    ),
    (
        "bad MASTER_PORT",
        {"WORLD_SIZE": "2", "RANK": "1", "MASTER_ADDR": "h", "MASTER_PORT": "0"},
        r"MASTER_ADDR:MASTER_PORT: bad port \(got 'h:0'\)",
    ),
    (
        "Kubeflow world not divisible",
        {
            "WORLD_SIZE": "15",
            "RANK": "1",
            "PET_NPROC_PER_NODE": "8",
            "MASTER_ADDR": "h",
            "MASTER_PORT": "1",
        },
        r"WORLD_SIZE 15 is not a multiple of PET_NPROC_PER_NODE 8",
    ),
    (
        "Kubeflow rank of a process, not a pod",
        {
            "WORLD_SIZE": "16",
            "RANK": "9",
            "PET_NPROC_PER_NODE": "8",
            "MASTER_ADDR": "h",
            "MASTER_PORT": "1",
        },
        r"RANK: 9 is out of range for machines",
    ),
    ("trial id variable", {"CLOUD_ML_TRIAL_ID": "a/b"}, r"CLOUD_ML_TRIAL_ID: trial id is not"),
]


@pytest.mark.parametrize(("env", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_raises_a_vtrain_error_that_says_what_is_wrong(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        ClusterInfo.from_env(env)


CONFLICTS = [
    (
        "CLUSTER_SPEC chief, TF_CONFIG worker 1",
        {
            "CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool0", 0),
            "TF_CONFIG": tf_config({"chief": ["c:1"], "worker": ["a:1", "b:1"]}, "worker", 1),
        },
        r"CLUSTER_SPEC says this replica is workerpool0\[0\] .*TF_CONFIG says worker\[1\]",
    ),
    (
        "different trials",
        {
            "CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool1", 0, trial="1"),
            "TF_CONFIG": tf_config({"chief": ["c:1"], "worker": ["a:1"]}, "worker", 0, trial="2"),
        },
        r"\(trial 1\), TF_CONFIG says worker\[0\] \(trial 2\)",
    ),
    (
        "RANK disagrees with CLUSTER_SPEC",
        {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool1", 1), "RANK": "1"},
        r"RANK: RANK=1, but CLUSTER_SPEC gives this replica rank 2",
    ),
    (
        "WORLD_SIZE disagrees with TF_CONFIG",
        {
            "TF_CONFIG": tf_config({"chief": ["c:1"], "worker": ["a:1"]}, "chief", 0),
            "WORLD_SIZE": "4",
            "RANK": "0",
        },
        r"WORLD_SIZE=4, but TF_CONFIG has 2 trainers",
    ),
    (
        "CLOUD_ML_TRIAL_ID disagrees",
        {
            "CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool0", 0, trial="3"),
            "CLOUD_ML_TRIAL_ID": "4",
        },
        r"CLOUD_ML_TRIAL_ID=4, but CLUSTER_SPEC says trial 3",
    ),
]


@pytest.mark.parametrize(
    ("env", "message"), [c[1:] for c in CONFLICTS], ids=[c[0] for c in CONFLICTS]
)
def test_conflicting_sources_are_an_error_not_a_silent_choice(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConflictError, match=message):
        ClusterInfo.from_env(env)


def test_the_override_picks_a_side_explicitly() -> None:
    env = dict(CONFLICTS[0][1], VTRAIN_CLUSTER_SOURCE="tf_config")
    info = ClusterInfo.from_env(env)
    assert (info.source, info.role, info.index, info.rank) == ("tf_config", "worker", 1, 2)
    env["VTRAIN_CLUSTER_SOURCE"] = "cluster_spec"
    info = ClusterInfo.from_env(env)
    assert (info.source, info.platform, info.role) == ("cluster_spec", "vertex", "chief")
    env["VTRAIN_CLUSTER_SOURCE"] = "single"
    assert ClusterInfo.from_env(env).source == "single"


def test_an_unknown_override_is_refused() -> None:
    with pytest.raises(
        UsageError, match=r"VTRAIN_CLUSTER_SOURCE: unknown source \(got 'tfconfig'\)"
    ):
        ClusterInfo.from_env({"VTRAIN_CLUSTER_SOURCE": "tfconfig"})


def test_from_json_names_its_document_kind() -> None:
    with pytest.raises(UsageError, match="expected CLUSTER_SPEC or TF_CONFIG"):
        ClusterInfo.from_json("{}", variable="SM_HOSTS")


def test_an_override_naming_an_unset_source_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"VTRAIN_CLUSTER_SOURCE: asks for the tf_config source"):
        ClusterInfo.from_env({"VTRAIN_CLUSTER_SOURCE": "tf_config", "RANK": "0"})


@pytest.mark.parametrize(
    "env",
    [
        {"CLUSTER_SPEC": "{}"},
        {"CLUSTER_SPEC": json.dumps({"cluster": {}})},
        {"CLUSTER_SPEC": json.dumps({"task": {"type": "workerpool0", "index": 0}})},
        {"CLUSTER_SPEC": cluster_spec({"workerpool0": []}, "workerpool0", 0)},
        {"TF_CONFIG": "{}"},
        {"TF_CONFIG": json.dumps({"cluster": {}, "task": {"type": "worker", "index": 0}})},
        # A task and no cluster: TensorFlow runs it as one process.
        {"TF_CONFIG": json.dumps({"task": {"type": "worker", "index": 0}})},
        # Kubeflow's dynamic-worker chief: its sparseCluster lists nobody.
        {
            "TF_CONFIG": json.dumps(
                {"sparseCluster": {"worker": {}, "ps": []}, "task": {"type": "chief", "index": 0}}
            )
        },
    ],
    ids=lambda env: f"{next(iter(env))}={next(iter(env.values()))[:40]}",
)
def test_a_document_that_lists_no_task_means_no_cluster(env: dict[str, str]) -> None:
    # As the Vertex SDK and TensorFlow read them: one process, the chief.
    assert ClusterInfo.from_env(env) == ClusterInfo.single()
