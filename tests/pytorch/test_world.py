"""The rank arithmetic, for every platform and for several processes per machine."""

from __future__ import annotations

import json

import pytest
from platform_examples import VERTEX_CLUSTER, cluster_spec

from vtrain import ClusterInfo, UsageError
from vtrain_pytorch import World


def vertex(pool: str, index: int, **env: str) -> ClusterInfo:
    return ClusterInfo.from_env({"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, pool, index), **env})


def test_two_machines_of_eight_gpus_number_ranks_0_to_15() -> None:
    cluster = {"workerpool0": ["m0:2222"], "workerpool1": ["m1:2222"]}
    seen = []
    for machine, pool in enumerate(("workerpool0", "workerpool1")):
        info = ClusterInfo.from_env({"CLUSTER_SPEC": cluster_spec(cluster, pool, 0)})
        for local in range(8):
            world = World.from_cluster(info, nproc_per_node=8, local_rank=local)
            assert (world.world_size, world.num_nodes, world.node_rank) == (16, 2, machine)
            assert (world.local_rank, world.local_world_size) == (local, 8)
            assert (world.master_addr, world.master_port) == ("m0", 2222)
            seen.append(world.rank)
    assert seen == list(range(16))


def test_torchrun_inside_a_vertex_replica_uses_its_local_rank() -> None:
    # torchrun across the 3 machines, 4 processes each: its RANK is the process's rank.
    env = {
        "TORCHELASTIC_RUN_ID": "r",
        "LOCAL_RANK": "3",
        "LOCAL_WORLD_SIZE": "4",
        "RANK": "11",
        "WORLD_SIZE": "12",
        "GROUP_RANK": "2",
        "MASTER_ADDR": "x",
        "MASTER_PORT": "1",
    }
    info = vertex("workerpool1", 1, **env)  # machine rank 2 of 3
    world = World.from_cluster(info)
    assert (world.rank, world.world_size, world.node_rank) == (2 * 4 + 3, 12, 2)


def test_torchrun_ranks_are_final() -> None:
    env = {
        "TORCHELASTIC_RUN_ID": "r",
        "RANK": "13",
        "LOCAL_RANK": "5",
        "WORLD_SIZE": "16",
        "LOCAL_WORLD_SIZE": "8",
        "GROUP_RANK": "1",
        "MASTER_ADDR": "n0",
        "MASTER_PORT": "29400",
    }
    world = World.from_cluster(ClusterInfo.from_env(env))
    assert (world.rank, world.world_size, world.local_rank, world.node_rank) == (13, 16, 5, 1)
    assert (world.master_addr, world.master_port, world.num_nodes) == ("n0", 29400, 2)
    with pytest.raises(UsageError, match="torchrun started 8 processes per node"):
        World.from_cluster(ClusterInfo.from_env(env), nproc_per_node=4)


def test_kubeflow_pods_count_as_machines_not_processes() -> None:
    env = {
        "MASTER_ADDR": "job-master-0",
        "MASTER_PORT": "23456",
        "WORLD_SIZE": "16",
        "RANK": "1",
        "PET_NPROC_PER_NODE": "8",
        "PET_NNODES": "2",
    }
    info = ClusterInfo.from_env(env)
    # Started without torchrun: one process per pod, unless told otherwise.
    assert World.from_cluster(info, environ=env).world_size == 2
    world = World.from_cluster(info, nproc_per_node=8, local_rank=7, environ=env)
    assert (world.rank, world.world_size) == (15, 16)


def test_the_platforms_master_variables_win_over_the_cluster_address() -> None:
    info = vertex("workerpool1", 0)
    env = {"MASTER_ADDR": "cmle-training-workerpool0-ab-0", "MASTER_PORT": "3333"}
    assert World.from_cluster(info, environ=env).master_port == 3333
    assert World.from_cluster(info).master_port == 2222


def test_env_holds_every_variable_torch_reads() -> None:
    world = World.from_cluster(vertex("workerpool1", 1), nproc_per_node=2, local_rank=1)
    assert world.env() == {
        "MASTER_ADDR": "cmle-training-workerpool0-ab-0",
        "MASTER_PORT": "2222",
        "WORLD_SIZE": "6",
        "RANK": "5",
        "LOCAL_RANK": "1",
        "LOCAL_WORLD_SIZE": "2",
        "NODE_RANK": "2",
        "GROUP_RANK": "2",
    }


@pytest.mark.parametrize(("pool", "role"), [("workerpool2", "ps"), ("workerpool3", "evaluator")])
def test_non_trainers_are_not_in_the_world(pool: str, role: str) -> None:
    with pytest.raises(UsageError, match=f"a {role} replica is not part of the torch world"):
        World.from_cluster(vertex(pool, 0))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"nproc_per_node": 0}, r"nproc_per_node: must be at least 1 \(got 0\)"),
        ({"nproc_per_node": "8"}, r"nproc_per_node: not an integer"),
        ({"nproc_per_node": 2, "local_rank": 2}, r"local_rank: local rank 2 is out of range"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        World.from_cluster(vertex("workerpool0", 0), **kwargs)  # type: ignore[arg-type]


def test_reduction_server_replicas_are_not_in_the_world() -> None:
    from platform_examples import EXAMPLES

    (example,) = [e for e in EXAMPLES if "reduction server" in e.name]
    info = ClusterInfo.from_env(example.env)
    assert info.role == "reduction_server"
    with pytest.raises(UsageError, match="reduction_server replica is not part"):
        World.from_cluster(info)
    json.dumps(info.to_dict())
