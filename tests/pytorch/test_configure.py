"""configure() in one process: no process group alone, roles outside the world, bad options."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from platform_examples import VERTEX_CLUSTER, cluster_spec

import vtrain
from vtrain import UsageError


def test_the_plugin_is_found_through_its_entry_point_without_importing_torch() -> None:
    code = (
        "import sys, vtrain\n"
        "p = vtrain.plugins.get('pytorch')\n"
        "print(type(p).__name__, p.is_available(), 'torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["PyTorchPlugin", "True", "False"]


def test_a_single_process_just_works_without_a_process_group() -> None:
    import torch.distributed as dist

    env: dict[str, str] = {}
    handle = vtrain.plugins.get("pytorch").configure(environ=env)
    assert (handle.rank, handle.world_size, handle.local_rank, handle.is_leader) == (0, 1, 0, True)
    assert not handle.distributed and not dist.is_initialized()
    assert handle.device.type == "cpu" and env["RANK"] == "0" and env["WORLD_SIZE"] == "1"
    import torch

    model = torch.nn.Linear(2, 1)
    assert handle.wrap(model) is model  # on the CPU already; no DDP in a world of one
    handle.barrier()
    sampler = handle.sampler(list(range(10)), shuffle=False)
    assert list(sampler) == list(range(10))


@pytest.mark.parametrize(("pool", "role"), [("workerpool2", "ps"), ("workerpool3", "evaluator")])
def test_replicas_outside_the_world_are_told_their_role(pool: str, role: str) -> None:
    env = {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, pool, 0)}
    handle = vtrain.plugins.get("pytorch").configure(environ=env)
    assert (handle.role, handle.rank, handle.world_size) == (role, None, 0)
    assert "RANK" not in env and not handle.is_leader


def test_unknown_options_and_backends_are_refused() -> None:
    plugin = vtrain.plugins.get("pytorch")
    with pytest.raises(UsageError, match=r"pytorch.configure: unknown option \(got \['nprocs'\]\)"):
        plugin.configure(environ={}, nprocs=2)
    env = {
        "TF_CONFIG": json.dumps(
            {
                "cluster": {"chief": ["127.0.0.1:1"], "worker": ["h:2"]},
                "task": {"type": "chief", "index": 0},
            }
        )
    }
    with pytest.raises(UsageError, match=r"backend: unknown backend \(got 'mpi'\)"):
        plugin.configure(environ=env, backend="mpi")


@pytest.mark.parametrize(
    ("requested", "gpus", "local", "chosen"),
    [
        (None, 0, 1, "gloo"),  # a CPU machine
        (None, 1, 1, "nccl"),  # one GPU, one process
        (None, 8, 8, "nccl"),  # a GPU per process
        (None, 4, 8, "gloo"),  # too few GPUs for the processes: nccl would fail
        ("gloo", 8, 8, "gloo"),  # asked for
    ],
)
def test_the_backend_follows_the_gpus(
    requested: str | None, gpus: int, local: int, chosen: str
) -> None:
    from vtrain_pytorch.plugin import choose_backend

    assert choose_backend(requested, gpus=gpus, local_world_size=local) == chosen


def test_nccl_without_a_gpu_per_process_is_refused() -> None:
    from vtrain_pytorch.plugin import choose_backend

    with pytest.raises(UsageError, match=r"nccl needs a GPU for each of the 8 process\(es\)"):
        choose_backend("nccl", gpus=2, local_world_size=8)
