"""Every environment of PLATFORM.md gives the role, index and rank it has on that platform."""

from __future__ import annotations

import pytest
from platform_examples import EXAMPLES, Example

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
        {"TORCHELASTIC_RUN_ID": "j", "RANK": "9", "WORLD_SIZE": "16", "LOCAL_RANK": "1",
         "MASTER_ADDR": "job-master-0", "MASTER_PORT": "23456", "PET_NPROC_PER_NODE": "8",
         "PET_NNODES": "2"}
    )  # fmt: skip
    assert (info.source, info.platform) == ("torchrun", "kubeflow")
    assert (info.rank, info.num_trainers) == (9, 16)


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
        {"TORCHELASTIC_RUN_ID": "j", "RANK": "0", "WORLD_SIZE": "3",
         "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    )  # fmt: skip
    assert info.cluster["worker"] == (None, None)
    assert info.address == "127.0.0.1:29500" and info.is_distributed


def test_under_torchrun_inside_a_vertex_replica_only_local_rank_0_of_the_chief_leads() -> None:
    from platform_examples import VERTEX_CLUSTER, cluster_spec

    torchrun = {"TORCHELASTIC_RUN_ID": "r", "LOCAL_WORLD_SIZE": "8", "RANK": "3", "WORLD_SIZE": "8",
                "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}  # fmt: skip
    spec = {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool0", 0), **torchrun}
    leaders = [
        ClusterInfo.from_env({**spec, "LOCAL_RANK": str(local)}).is_chief for local in range(8)
    ]
    assert leaders == [True] + [False] * 7


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
