"""vtrain's process ranks against Lightning's, for every process of generated jobs.

A job is simulated whole: every process's environment as torchrun (alone, inside
Vertex replicas, with `--virtual-local-rank`, with c10d's own node order) or
Kubeflow's PyTorchJob (one process per pod, or torchrun inside each pod, with
an elastic PET_NNODES) would write it. For each job vtrain's ranks must be
exactly 0..N-1 with one chief, and equal Lightning's (TorchElasticEnvironment,
KubeflowEnvironment) wherever Lightning's ranks are a valid set.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lightning.fabric.plugins.environments import KubeflowEnvironment, TorchElasticEnvironment

from vtrain import ClusterInfo
from vtrain_pytorch import World

SEEN: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    yield
    print(f"\ndifferential torch jobs: {dict(SEEN)}")


def vertex_spec(machines: int, me: int) -> str:
    pools = {"workerpool0": ["m0:2222"]}
    if machines > 1:
        pools["workerpool1"] = [f"m{i}:2222" for i in range(1, machines)]
    task = {"type": "workerpool0" if me == 0 else "workerpool1", "index": max(me - 1, 0)}
    return json.dumps({"cluster": pools, "task": task, "environment": "cloud"})


@st.composite
def jobs(draw: st.DrawFn) -> tuple[str, list[dict[str, str]]]:
    """A launcher, and the environment of every process of one job."""
    machines = draw(st.integers(1, 3))
    nproc = draw(st.integers(1, 3))
    launcher = draw(
        st.sampled_from(["torchrun", "torchrun on vertex", "kubeflow", "kubeflow+torchrun"])
    )
    virtual = draw(st.booleans())  # torchrun --virtual-local-rank
    # c10d assigns GROUP_RANK in its own order, not the platform's.
    order = draw(st.permutations(range(machines)))
    elastic = draw(st.sampled_from([None, f"1:{machines + 1}", str(max(machines - 1, 1))]))
    envs = []
    if launcher == "kubeflow":
        nproc = 1  # without torchrun, a pod runs one process
    for machine in range(machines):
        group = order[machine] if "torchrun" in launcher else machine
        for local in range(nproc):
            env = {"MASTER_ADDR": "m0", "MASTER_PORT": "29500", "KUBERNETES_PORT": "tcp://x:443"}
            if launcher == "kubeflow":
                env.update(RANK=str(machine), WORLD_SIZE=str(machines), PET_NPROC_PER_NODE="1")
                if elastic is not None:
                    env["PET_NNODES"] = elastic
            else:
                env.update(
                    TORCHELASTIC_RUN_ID="job",
                    RANK=str(group * nproc + local),
                    WORLD_SIZE=str(machines * nproc),
                    LOCAL_RANK="0" if virtual else str(local),
                    LOCAL_WORLD_SIZE=str(nproc),
                    GROUP_RANK=str(group),
                )
                if launcher == "torchrun on vertex":
                    env["CLUSTER_SPEC"] = vertex_spec(machines, machine)
                if launcher == "kubeflow+torchrun":
                    env.update(PET_NPROC_PER_NODE=str(nproc), PET_NNODES=elastic or str(machines))
            envs.append(env)
    return launcher, envs


def vtrains_ranks(env: dict[str, str]) -> tuple[int, int, bool]:
    info = ClusterInfo.from_env(env)
    world = World.from_cluster(info, environ=env)
    return world.rank, world.world_size, info.is_chief


def lightnings_ranks(env: dict[str, str]) -> tuple[int, int]:
    with mock.patch.dict(os.environ, env, clear=True):
        cluster: Any = TorchElasticEnvironment() if "TORCHELASTIC_RUN_ID" in env else None
        if cluster is None:
            cluster = KubeflowEnvironment()
        return cluster.global_rank(), cluster.world_size()


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job=jobs())
def test_every_process_gets_one_rank_and_one_chief(job: tuple[str, list[dict[str, str]]]) -> None:
    launcher, envs = job
    mine = [vtrains_ranks(env) for env in envs]
    ranks = sorted(rank for rank, _, _ in mine)
    assert ranks == list(range(len(envs))), (launcher, envs)
    assert {size for _, size, _ in mine} == {len(envs)}
    assert sum(chief for _, _, chief in mine) == 1
    # The chief is rank 0, the process that rank-0 code paths (and torch) single out.
    assert [rank for rank, _, chief in mine if chief] == [0]
    theirs = [lightnings_ranks(env) for env in envs]
    if sorted(rank for rank, _ in theirs) == list(range(len(envs))):
        assert [(rank, size) for rank, size, _ in mine] == theirs
        SEEN[f"{launcher}: agrees with Lightning"] += 1
    else:
        SEEN[f"{launcher}: Lightning's ranks are not a valid set"] += 1
