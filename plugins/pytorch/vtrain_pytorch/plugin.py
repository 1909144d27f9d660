"""The "pytorch" plugin: `configure()` turns a ClusterInfo into an initialised torch world."""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from datetime import timedelta
from typing import Any

from vtrain import ClusterInfo, UsageError
from vtrain.log import logger
from vtrain.plugins.base import KubeflowJob, Plugin
from vtrain.plugins.wait import DEFAULT_WAIT, wait_for_chief
from vtrain_pytorch.handle import TorchHandle
from vtrain_pytorch.world import World

# Replicas start minutes apart on Vertex; torch's own 10-minute default (30 for
# gloo in recent releases) has killed jobs whose chief waited for a slow worker.
DEFAULT_TIMEOUT = timedelta(minutes=60)
BACKENDS = ("gloo", "nccl")

log = logger(__name__)


class PyTorchPlugin(Plugin):
    """torch.distributed from the platform's description, with a patient rendezvous."""

    name = "pytorch"
    extra = "pytorch"
    requires = ("torch",)
    installs = {
        "lightning": "lightning",
        "pytorch_lightning": "lightning",
        "tensorboardX": "lightning",
    }
    kubeflow = KubeflowJob(kind="PyTorchJob")

    def environment(
        self,
        info: ClusterInfo,
        environ: Mapping[str, str],
        *,
        nproc_per_node: int | None = None,
        local_rank: int | None = None,
        **_: Any,
    ) -> dict[str, str | None]:
        """MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK … for a trainer; nothing elsewhere.

        `nproc_per_node` and `local_rank` place this process on its machine, as for
        `configure`.
        """
        if not info.is_trainer:
            return {}
        world = World.from_cluster(
            info, nproc_per_node=nproc_per_node, local_rank=local_rank, environ=environ
        )
        return dict(world.env())

    def configure(
        self,
        info: ClusterInfo | None = None,
        *,
        backend: str | None = None,
        nproc_per_node: int | None = None,
        local_rank: int | None = None,
        timeout: timedelta = DEFAULT_TIMEOUT,
        wait: timedelta = DEFAULT_WAIT,
        environ: MutableMapping[str, str] | None = None,
    ) -> TorchHandle:
        """Set the torch variables, wait for the chief, and initialise the process group.

        `environ` (default `os.environ`) is read for the cluster and receives
        MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE
        and NODE_RANK. A single process gets no process group. ps, evaluator and
        Reduction Server replicas get a handle whose `rank` is None.

        `backend` is "gloo" or "nccl" (default: nccl with a GPU for each process on the
        machine, else gloo). `nproc_per_node` processes run on each machine (default 1,
        or what torchrun said), this one `local_rank` among them. A worker waits up to
        `wait` (30 minutes) for the chief's port to open, and the process group's
        collectives up to `timeout` (60 minutes). A bad option raises `UsageError`.
        """
        env = os.environ if environ is None else environ
        torch = self.require("torch")
        info = self.prepare(info, env, nproc_per_node=nproc_per_node, local_rank=local_rank)
        if not info.is_trainer:
            return TorchHandle(
                info=info,
                is_leader=False,
                world=None,
                backend=None,
                device=torch.device("cpu"),
                environ=env,
            )

        world = World.from_cluster(
            info, nproc_per_node=nproc_per_node, local_rank=local_rank, environ=env
        )
        # Process 0 of the leading machine leads; under a per-GPU launcher the others do not.
        is_leader = self.leads(info, env) and world.local_rank == 0
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        backend = choose_backend(backend, gpus=gpus, local_world_size=world.local_world_size)
        device = (
            torch.device("cuda", world.local_rank) if backend == "nccl" else torch.device("cpu")
        )
        if backend == "nccl":
            torch.cuda.set_device(device)
            if gpus > world.local_world_size:
                log.warning(
                    f"vtrain: {gpus} GPUs on this machine, {world.local_world_size} process(es) "
                    "using them: start one per GPU with `python -m vtrain_pytorch.launch "
                    "--nproc-per-node gpu SCRIPT`"
                )
        if world.world_size == 1:
            return TorchHandle(
                info=info,
                is_leader=is_leader,
                world=world,
                backend=None,
                device=device,
                environ=env,
            )

        import torch.distributed as dist

        if not dist.is_initialized():
            if not world.is_chief:
                wait_for_chief(world.master_addr, world.master_port, wait)
            dist.init_process_group(
                backend=backend,
                init_method=f"tcp://{_bracketed(world.master_addr)}:{world.master_port}",
                world_size=world.world_size,
                rank=world.rank,
                timeout=timeout,
            )
        return TorchHandle(
            info=info, is_leader=is_leader, world=world, backend=backend, device=device, environ=env
        )


def choose_backend(requested: str | None, *, gpus: int, local_world_size: int) -> str:
    """The process-group backend: `requested`, else nccl with a GPU per local process, else gloo."""
    if requested is None:
        # nccl needs one GPU per local process; anything less falls back to gloo.
        return "nccl" if gpus >= local_world_size and gpus > 0 else "gloo"
    if requested not in BACKENDS:
        raise UsageError(
            "unknown backend", source="backend", value=requested, expected="gloo or nccl"
        )
    if requested == "nccl" and gpus < local_world_size:
        raise UsageError(
            f"nccl needs a GPU for each of the {local_world_size} process(es) on this machine, "
            f"and {gpus} are visible",
            source="backend",
            value=requested,
            expected="gloo, or one GPU per process",
        )
    return requested


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host
