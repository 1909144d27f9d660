"""torchrun (torch.distributed.run / TorchElastic): one replica per process it launched.

torchrun always sets TORCHELASTIC_RUN_ID, which is how it is told apart from
Kubeflow's env:// variables, where a RANK names a whole machine. vtrain's own
per-GPU launcher (`python -m vtrain_pytorch.launch`) sets the same per-process
variables and VTRAIN_LOCAL_LAUNCH, and is read the same way.
"""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.cluster import fields
from vtrain.cluster.build import checked
from vtrain.cluster.roles import CHIEF, WORKER
from vtrain.cluster.torch_env_reader import master_address, out_of_range, platform, rank_in_world
from vtrain.variables import LOCAL_LAUNCH

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "torchrun"
MARKER = "TORCHELASTIC_RUN_ID"


def present(environ: Mapping[str, str]) -> bool:
    """True inside a process that torchrun (or vtrain's per-GPU launcher) started.

    Set counts, empty included: torch itself (`is_torchelastic_launched`) asks only
    whether TORCHELASTIC_RUN_ID exists.
    """
    return MARKER in environ or bool(environ.get(LOCAL_LAUNCH))


def read(environ: Mapping[str, str]) -> dict[str, Any]:
    """A cluster of torchrun's processes: rank 0 is the chief."""
    marker = MARKER if MARKER in environ else LOCAL_LAUNCH
    why = f"{marker} is set, so its launcher should have set it"
    rank, world = rank_in_world(environ, "RANK", "WORLD_SIZE", why)
    local_world = fields.env_int(environ, "LOCAL_WORLD_SIZE", minimum=1)
    local_rank = fields.env_int(environ, "LOCAL_RANK")
    if local_rank is not None and local_world is not None and local_rank >= local_world:
        raise out_of_range("LOCAL_RANK", local_rank, "LOCAL_WORLD_SIZE", local_world)
    return checked(
        "torchrun",
        source=NAME,
        # torchrun started by a Kubeflow PyTorchJob keeps the operator's PET_* variables.
        platform=platform(environ),
        cluster={CHIEF: (master_address(environ),), WORKER: (None,) * (world - 1)},
        role=CHIEF if rank == 0 else WORKER,
        index=0 if rank == 0 else rank - 1,
        role_names={},  # torchrun has ranks, not roles
        local_rank=local_rank,
        local_world_size=local_world,
        node_rank=fields.env_int(environ, "GROUP_RANK"),
        process_rank=rank,
        process_count=world,
    )


def process_fields(environ: Mapping[str, str]) -> dict[str, int | None]:
    """torchrun's per-process facts, for a replica whose cluster came from CLUSTER_SPEC."""
    # A torchrun process of a platform replica: the whole process world is torchrun's,
    # so its RANK and WORLD_SIZE are checked as in `read`.
    processes = read(environ)
    names = ("local_rank", "local_world_size", "node_rank", "process_rank", "process_count")
    return {name: processes.get(name) for name in names}
