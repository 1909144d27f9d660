"""Every environment of PLATFORM.md gives the role, index and rank it has on that platform."""

from __future__ import annotations

import pytest
from platform_examples import EXAMPLES, Example, cluster_spec

from vtrain import ClusterInfo


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_example_reads_as_the_platform_means_it(example: Example) -> None:
    info = ClusterInfo.from_env(example.env)
    assert (info.source, info.platform) == (example.source, example.platform)
    assert (info.role, info.index, info.rank) == (example.role, example.index, example.rank)
    assert info.num_trainers == example.num_trainers
    assert info.is_chief is example.is_chief
    assert info.chief_address == example.chief_address
    assert info.trial_id == example.trial_id


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_the_source_is_the_name_that_forces_it(example: Example) -> None:
    # One vocabulary: what `info.source` says is what VTRAIN_CLUSTER_SOURCE takes.
    info = ClusterInfo.from_env(example.env)
    assert ClusterInfo.from_env({**example.env, "VTRAIN_CLUSTER_SOURCE": info.source}) == info


def test_torchrun_in_a_kubeflow_pod_is_read_per_process_and_says_kubeflow() -> None:
    info = ClusterInfo.from_env(
        {
            "TORCHELASTIC_RUN_ID": "j",
            "RANK": "9",
            "WORLD_SIZE": "16",
            "LOCAL_RANK": "1",
            "MASTER_ADDR": "job-master-0",
            "MASTER_PORT": "23456",
            "PET_NPROC_PER_NODE": "8",
            "PET_NNODES": "2",
        }
    )
    assert (info.source, info.platform) == ("torchrun", "kubeflow")
    assert (info.rank, info.num_trainers) == (9, 16)


@pytest.mark.parametrize(
    ("nnodes", "nproc", "world", "machines"),
    [
        ("2", None, "3", 3),  # Master + 2 Workers with an elastic policy: PET_NNODES counts workers
        ("1:4", None, "3", 3),  # an elastic range, not the pods that exist
        ("3", "8", "16", 2),  # WORLD_SIZE / PET_NPROC_PER_NODE, whatever PET_NNODES says
        ("2", "gpu", "2", 2),  # a non-numeric nproc: the operator counts 1 per pod
    ],
)
def test_kubeflow_machines_come_from_world_size_not_pet_nnodes(
    nnodes: str, nproc: str | None, world: str, machines: int
) -> None:
    env = {
        "MASTER_ADDR": "job-master-0",
        "MASTER_PORT": "23456",
        "WORLD_SIZE": world,
        "RANK": str(machines - 1),
        "PET_NNODES": nnodes,
    }
    if nproc is not None:
        env["PET_NPROC_PER_NODE"] = nproc
    info = ClusterInfo.from_env(env)
    assert (info.num_trainers, info.rank, info.role) == (machines, machines - 1, "worker")
    # Every pod of the job derives the same count.
    for rank in range(machines):
        assert ClusterInfo.from_env({**env, "RANK": str(rank)}).num_trainers == machines


def test_ranks_of_a_whole_vertex_cluster_are_a_permutation() -> None:
    from platform_examples import VERTEX_CLUSTER, cluster_spec

    ranks = []
    for pool, role in (("workerpool0", "chief"), ("workerpool1", "worker")):
        for i in range(len(VERTEX_CLUSTER[pool])):
            info = ClusterInfo.from_env({"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, pool, i)})
            assert info.role == role
            ranks.append(info.rank)
    assert ranks == [0, 1, 2]


def test_the_value_is_frozen_all_the_way_down() -> None:
    info = ClusterInfo.from_env(EXAMPLES[1].env)
    with pytest.raises(AttributeError, match="is frozen"):
        info.role = "worker"  # type: ignore[misc]
    with pytest.raises(TypeError):
        info.cluster["chief"] = ("x:1",)  # type: ignore[index]
    with pytest.raises(TypeError):
        info.job["x"] = 1  # type: ignore[index]


def test_source_role_keeps_the_platforms_own_name() -> None:
    names = {e.name: ClusterInfo.from_env(e.env).source_role for e in EXAMPLES}
    assert names["ai platform master"] == "master"
    assert names["vertex worker 1, tuning trial"] == "workerpool1"
    assert names["TF_CONFIG master (AI Platform default)"] == "master"


def test_unknown_addresses_stay_unknown_but_counted() -> None:
    info = ClusterInfo.from_env(
        {
            "TORCHELASTIC_RUN_ID": "j",
            "RANK": "0",
            "WORLD_SIZE": "3",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "29500",
        }
    )
    assert info.cluster["worker"] == (None, None)
    assert info.address == "127.0.0.1:29500" and info.is_distributed


def torchrun_process(
    rank: int, *, local: int, group: int, nproc: int, nodes: int
) -> dict[str, str]:
    """What torchrun sets in one of the processes it starts."""
    return {
        "TORCHELASTIC_RUN_ID": "r",
        "RANK": str(rank),
        "WORLD_SIZE": str(nproc * nodes),
        "LOCAL_RANK": str(local),
        "LOCAL_WORLD_SIZE": str(nproc),
        "GROUP_RANK": str(group),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": "29500",
    }


def test_under_torchrun_inside_a_vertex_replica_only_local_rank_0_of_the_chief_leads() -> None:
    from platform_examples import VERTEX_CLUSTER, cluster_spec

    spec = {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool0", 0)}
    infos = [
        ClusterInfo.from_env({**spec, **torchrun_process(p, local=p, group=0, nproc=8, nodes=3)})
        for p in range(8)
    ]
    assert [i.is_chief for i in infos] == [True] + [False] * 7
    assert [i.process_rank for i in infos] == list(range(8))


def test_torchrun_virtual_local_ranks_on_vertex_give_one_chief() -> None:
    # `torchrun --virtual-local-rank` sets LOCAL_RANK=0 in every process; Vertex sets
    # CLUSTER_SPEC even for one replica. RANK is then the only thing that tells them apart.
    spec = {"CLUSTER_SPEC": cluster_spec({"workerpool0": ["h:2222"]}, "workerpool0", 0)}
    infos = [
        ClusterInfo.from_env({**spec, **torchrun_process(p, local=0, group=0, nproc=2, nodes=1)})
        for p in range(2)
    ]
    assert [(i.is_chief, i.process_rank, i.process_count) for i in infos] == [
        (True, 0, 2),
        (False, 1, 2),
    ]


def test_torchrun_c10d_node_order_decides_the_chief_not_the_platforms() -> None:
    # With the c10d rendezvous, torchrun's RANK 0 may run on a worker's machine.
    from platform_examples import VERTEX_CLUSTER

    on_worker = {
        "CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool1", 1),
        **torchrun_process(0, local=0, group=0, nproc=1, nodes=3),
    }
    on_chief = {
        "CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool0", 0),
        **torchrun_process(2, local=0, group=2, nproc=1, nodes=3),
    }
    assert ClusterInfo.from_env(on_worker).is_chief
    assert not ClusterInfo.from_env(on_chief).is_chief


def test_single_process_is_a_cluster_of_one() -> None:
    info = ClusterInfo.from_env({})
    assert info == ClusterInfo.single()
    assert not info.is_distributed and info.is_trainer and info.rank == 0


def test_equality_repr_and_replace_behave_like_a_frozen_dataclass() -> None:
    info = ClusterInfo.from_env(EXAMPLES[2].env)
    again = ClusterInfo.from_env(EXAMPLES[2].env)
    assert info == again and info != ClusterInfo.single() and info != "x"
    assert repr(info).startswith("ClusterInfo(cluster=mappingproxy(")
    moved = info.replace(index=0)
    assert (moved.index, moved.rank, info.index) == (0, 1, 1)
    with pytest.raises(AttributeError, match="cannot delete 'role'"):
        del info.role  # type: ignore[misc]


def test_blanks_around_numbers_follow_one_rule() -> None:
    # torch reads both with int(), which ignores surrounding blanks.
    env = {"RANK": " 1", "WORLD_SIZE": "2 ", "MASTER_ADDR": " h", "MASTER_PORT": " 29500"}
    info = ClusterInfo.from_env(env)
    assert (info.rank, info.chief_address) == (1, "h:29500")


def test_an_empty_torchelastic_run_id_still_means_torchrun() -> None:
    # torch asks whether the variable exists (is_torchelastic_launched), not what it holds.
    env = {
        "TORCHELASTIC_RUN_ID": "",
        "RANK": "1",
        "WORLD_SIZE": "2",
        "LOCAL_RANK": "1",
        "LOCAL_WORLD_SIZE": "2",
        "MASTER_ADDR": "h",
        "MASTER_PORT": "1",
    }
    info = ClusterInfo.from_env(env)
    assert (info.source, info.local_rank, info.process_rank) == ("torchrun", 1, 1)
