"""Kubeflow Trainer v2's nodes: the `trainjob` reader, and every reader agreeing on one topology.

A topology is rendered as each engine would describe it to each replica: Vertex's
CLUSTER_SPEC, AI Platform's TF_CONFIG, the training operator's TFJob, and a
TrainJob (vtrain's layout on every topology; the torch-distributed and XGBoost
runtimes' variables where every node trains), both as a rehearsal writes it
(loopback addresses listed) and as the cluster's nodes get it (their index, the
JobSet's name, DNS names derived). Every node must derive the same cluster shape,
role, index, rank, chief and leader, whoever described it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain import ClusterInfo, ConfigError
from vtrain.cluster.leader import default_leader
from vtrain.local import Plan, replica_env

PY = [sys.executable, "-c", "pass"]
LAYOUT = "VTRAIN_TRAINJOB_LAYOUT"


def seen(info: ClusterInfo) -> tuple[Any, ...]:
    """What every description of one replica must agree on."""
    shape = {role: len(a) for role, a in info.cluster.items() if a}
    return (shape, info.role, info.index, info.rank, info.is_chief, default_leader(info))


def rehearsed(platform: str, workers: int, ps: int, evaluators: int) -> list[ClusterInfo]:
    plan = Plan.from_options(
        PY, output_dir="/out", job_id="job7", platform=platform,
        workers=workers, ps=ps, evaluators=evaluators,
    )  # fmt: skip
    replicas = plan.replicas([2001 + i for i in range(plan.size)])
    return [
        ClusterInfo.from_env(replica_env(plan, replicas, r, environ={"PATH": "/usr/bin"}))
        for r in replicas
    ]


def on_the_cluster(workers: int, ps: int, evaluators: int, jobset: str) -> list[list[ClusterInfo]]:
    """Each node of a TrainJob as its pods see it: one list per runtime that fits."""
    counts = {"chief": 1, "worker": workers, "ps": ps, "evaluator": evaluators}
    nodes = sum(counts.values())
    layout = json.dumps({**{r: n for r, n in counts.items() if n}, "port": 2222})
    by_label = [
        {LAYOUT: layout, "JOB_COMPLETION_INDEX": str(i), "VTRAIN_JOBSET": jobset}
        for i in range(nodes)
    ]
    by_hostname = [
        {LAYOUT: layout, "JOB_COMPLETION_INDEX": str(i), "HOSTNAME": f"{jobset}-node-0-{i}"}
        for i in range(nodes)
    ]
    runtimes = [by_label, by_hostname]
    master = f"{jobset}-node-0-0.{jobset}"
    if not ps and not evaluators:
        runtimes.append(
            [
                {
                    "PET_NNODES": str(nodes),
                    "PET_NPROC_PER_NODE": "auto",
                    "PET_NODE_RANK": str(i),
                    "PET_MASTER_ADDR": master,
                    "PET_MASTER_PORT": "29500",
                    "JOB_COMPLETION_INDEX": str(i),
                }
                for i in range(nodes)
            ]  # fmt: skip
        )
        runtimes.append(
            [
                {
                    "DMLC_TRACKER_URI": master,
                    "DMLC_TRACKER_PORT": "29500",
                    "DMLC_TASK_ID": str(i),
                    "DMLC_NUM_WORKER": str(nodes),
                    "JOB_COMPLETION_INDEX": str(i),
                }
                for i in range(nodes)
            ]  # fmt: skip
        )
    return [[ClusterInfo.from_env(env) for env in runtime] for runtime in runtimes]


@examples(60)
@given(
    workers=st.integers(0, 4),
    ps=st.integers(0, 2),
    evaluators=st.integers(0, 1),
    jobset=st.from_regex(r"[a-z]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True),
)
def test_every_engine_gives_every_node_the_same_cluster(
    workers: int, ps: int, evaluators: int, jobset: str
) -> None:
    if ps and not workers:
        workers = 1  # parameter servers serve workers: no engine runs them alone
    vertex = [seen(i) for i in rehearsed("vertex", workers, ps, evaluators)]
    assert [s[1:3] for s in vertex][0] == ("chief", 0)
    for platform in ("aiplatform", "kubeflow", "trainjob"):
        assert [seen(i) for i in rehearsed(platform, workers, ps, evaluators)] == vertex, platform
    for nodes in on_the_cluster(workers, ps, evaluators, jobset):
        assert [seen(i) for i in nodes] == vertex
        assert all(i.source == "trainjob" and i.platform == "kubeflow" for i in nodes)


def test_the_layout_names_every_node_by_the_jobset_s_dns() -> None:
    env = {
        LAYOUT: '{"chief": 1, "worker": 1, "ps": 1, "port": 2222}',
        "JOB_COMPLETION_INDEX": "2",
        "VTRAIN_JOBSET": "mnist",
    }
    info = ClusterInfo.from_env(env)
    assert (info.role, info.index, info.rank) == ("ps", 0, None)
    assert dict(info.cluster) == {
        "chief": ("mnist-node-0-0.mnist:2222",),
        "worker": ("mnist-node-0-1.mnist:2222",),
        "ps": ("mnist-node-0-2.mnist:2222",),
    }


def test_torch_distributed_and_xgboost_runtimes_give_node_0_the_chief_s_address() -> None:
    torch = ClusterInfo.from_env(
        {"PET_NNODES": "3", "PET_NPROC_PER_NODE": "4", "PET_NODE_RANK": "2",
         "PET_MASTER_ADDR": "j-node-0-0.j", "PET_MASTER_PORT": "29500"}
    )  # fmt: skip
    assert (torch.role, torch.index, torch.rank, torch.local_world_size) == ("worker", 1, 2, 4)
    assert torch.chief_address == "j-node-0-0.j:29500"
    xgb = ClusterInfo.from_env(
        {"DMLC_TRACKER_URI": "j-node-0-0.j", "DMLC_TRACKER_PORT": "29500",
         "DMLC_TASK_ID": "0", "DMLC_NUM_WORKER": "2"}
    )  # fmt: skip
    assert (xgb.role, xgb.rank, xgb.num_trainers, xgb.chief_address) == (
        "chief", 0, 2, "j-node-0-0.j:29500"
    )  # fmt: skip


def test_a_torchrun_command_on_the_torch_runtime_is_read_by_torchrun() -> None:
    env = {"PET_NNODES": "2", "PET_NODE_RANK": "1", "PET_MASTER_ADDR": "m", "PET_MASTER_PORT": "1",
           "TORCHELASTIC_RUN_ID": "r", "RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1",
           "LOCAL_WORLD_SIZE": "4", "MASTER_ADDR": "m", "MASTER_PORT": "1"}  # fmt: skip
    assert ClusterInfo.from_env(env).source == "torchrun"


GOOD = {LAYOUT: '{"chief":1,"worker":1,"port":2222}', "JOB_COMPLETION_INDEX": "1",
        "VTRAIN_JOBSET": "j"}  # fmt: skip
TORCH = {"PET_NNODES": "2", "PET_NODE_RANK": "1", "PET_MASTER_ADDR": "m", "PET_MASTER_PORT": "9"}
XGB = {"DMLC_TRACKER_URI": "m", "DMLC_TRACKER_PORT": "9", "DMLC_TASK_ID": "1",
       "DMLC_NUM_WORKER": "2"}  # fmt: skip


@pytest.mark.parametrize(
    ("env", "source", "said"),
    [
        ({**GOOD, LAYOUT: "{"}, LAYOUT, "JSON"),
        ({**GOOD, LAYOUT: "[1]"}, LAYOUT, "expected"),
        ({**GOOD, LAYOUT: '{"chief":1,"workers":2,"port":1}'}, LAYOUT, "unknown key"),
        ({**GOOD, LAYOUT: '{"worker":2,"port":1}'}, LAYOUT, "one chief"),
        ({**GOOD, LAYOUT: '{"chief":1,"worker":-1,"port":1}'}, LAYOUT, "worker"),
        ({**GOOD, LAYOUT: '{"chief":1,"port":0}'}, LAYOUT, "bad port"),
        ({**GOOD, LAYOUT: '{"chief":1,"worker":1}'}, LAYOUT, "port"),
        (
            {**GOOD, LAYOUT: '{"chief":1,"worker":1,"port":1,"addresses":["a:1","b"]}'},
            LAYOUT,
            "address has no port",
        ),
        (
            {**GOOD, LAYOUT: '{"chief":1,"worker":1,"port":1,"addresses":["a:1"]}'},
            LAYOUT,
            "1 addresses for 2 nodes",
        ),
        ({**GOOD, "JOB_COMPLETION_INDEX": ""}, "JOB_COMPLETION_INDEX", "is not set"),
        ({**GOOD, "JOB_COMPLETION_INDEX": "2"}, "JOB_COMPLETION_INDEX", "out of range"),
        ({**GOOD, "JOB_COMPLETION_INDEX": "x"}, "JOB_COMPLETION_INDEX", "not an integer"),
        ({**GOOD, "VTRAIN_JOBSET": ""}, "HOSTNAME", "names no node 1"),
        ({**GOOD, "VTRAIN_JOBSET": "", "HOSTNAME": "j-node-0-2"}, "HOSTNAME", "names no node 1"),
        ({**GOOD, "VTRAIN_JOBSET": "a/b"}, "VTRAIN_JOBSET", "not a JobSet name"),
        ({**TORCH, "PET_NODE_RANK": "2"}, "PET_NODE_RANK", "out of range"),
        ({**TORCH, "PET_NNODES": "1:4"}, "PET_NNODES", "not an integer"),
        ({**TORCH, "PET_MASTER_ADDR": "tcp://m"}, "PET_MASTER_ADDR", "not a host"),
        ({**TORCH, "PET_MASTER_PORT": ""}, "PET_MASTER_PORT", "is not set"),
        ({**XGB, "DMLC_TASK_ID": "2"}, "DMLC_TASK_ID", "out of range"),
        ({**XGB, "DMLC_NUM_WORKER": "0"}, "DMLC_NUM_WORKER", "not an integer"),
        ({**XGB, "DMLC_TRACKER_URI": "m:9"}, "DMLC_TRACKER_URI", "not a host"),
        ({**XGB, "DMLC_TRACKER_PORT": "70000"}, "DMLC_TRACKER_URI:DMLC_TRACKER_PORT", "bad port"),
    ],  # fmt: skip
)
def test_a_bad_node_description_names_its_variable(
    env: dict[str, str], source: str, said: str
) -> None:
    with pytest.raises(ConfigError) as e:
        ClusterInfo.from_env(env)
    assert e.value.source == source and said in str(e.value), str(e.value)
