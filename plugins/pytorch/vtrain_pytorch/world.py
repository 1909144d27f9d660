"""Where this process sits in the torch world: pure arithmetic on a `ClusterInfo`, no torch.

A platform replica is a machine. With `nproc_per_node` processes on each, the
world has machines x processes ranks, numbered machine by machine: process p of
machine m is rank m * nproc + p. Kubeflow's WORLD_SIZE already counts processes
and torchrun's RANK is already a process rank; ClusterInfo has undone the
first, and the second is taken as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from vtrain import ClusterInfo, UsageError

# When no platform names a chief address (a single machine), processes meet here.
LOCAL_MASTER = ("127.0.0.1", 29500)


@dataclass(frozen=True)
class World:
    """The torch.distributed coordinates of one process."""

    master_addr: str
    """The host every process meets at: the platform's MASTER_ADDR, else the chief's."""
    master_port: int
    """The port of that rendezvous."""
    world_size: int
    """All processes of the job: machines times processes per machine."""
    rank: int
    """This process's rank among them, machine by machine."""
    local_rank: int
    """This process's index on its machine (its GPU, under nccl)."""
    local_world_size: int
    """The processes on each machine."""
    node_rank: int
    """This machine's index among the machines that train."""
    num_nodes: int
    """The machines that train."""

    @classmethod
    def from_cluster(
        cls,
        info: ClusterInfo,
        *,
        nproc_per_node: int | None = None,
        local_rank: int | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> World:
        """This process's coordinates; `info` must describe a trainer (chief or worker).

        `nproc_per_node` processes run on each machine (default: what torchrun said,
        else 1), this one `local_rank` among them (default the cluster's, else 0).
        MASTER_ADDR and MASTER_PORT in `environ`, where both are set, are the
        rendezvous. A replica that does not train, or an option out of range, raises
        `UsageError`.
        """
        if info.rank is None:
            raise UsageError(
                f"a {info.role} replica is not part of the torch world",
                source="ClusterInfo.role",
                value=info.role,
                expected="chief or worker",
            )
        addr, port = _master(info, environ or {})
        if info.process_rank is not None and info.process_count is not None:
            # torchrun (or vtrain's launcher) started every process itself: its RANK and
            # WORLD_SIZE are final, whatever LOCAL_RANK (virtual) or GROUP_RANK (c10d) say.
            nproc = info.local_world_size or 1
            if nproc_per_node not in (None, nproc):
                raise UsageError(
                    f"torchrun started {nproc} processes per node",
                    source="nproc_per_node",
                    value=nproc_per_node,
                    expected=f"None or {nproc}",
                )
            rank = info.process_rank
            return cls(
                master_addr=addr,
                master_port=port,
                world_size=info.process_count,
                rank=rank,
                local_rank=info.local_rank or 0,
                local_world_size=nproc,
                node_rank=info.node_rank if info.node_rank is not None else rank // nproc,
                num_nodes=max(1, info.process_count // nproc),
            )
        nproc = _nproc(info, nproc_per_node)
        local = local_rank if local_rank is not None else (info.local_rank or 0)
        if not 0 <= local < nproc:
            raise UsageError(
                f"local rank {local} is out of range for {nproc} processes per node",
                source="local_rank",
                value=local,
                expected=f"0 to {nproc - 1}",
            )
        return cls(
            master_addr=addr,
            master_port=port,
            world_size=info.num_trainers * nproc,
            rank=info.rank * nproc + local,
            local_rank=local,
            local_world_size=nproc,
            node_rank=info.rank,
            num_nodes=info.num_trainers,
        )

    @property
    def is_chief(self) -> bool:
        """Global rank 0: the one process that writes shared artifacts."""
        return self.rank == 0

    def env(self) -> dict[str, str]:
        """The variables torch's env:// rendezvous and launch utilities read."""
        return {
            "MASTER_ADDR": self.master_addr,
            "MASTER_PORT": str(self.master_port),
            "WORLD_SIZE": str(self.world_size),
            "RANK": str(self.rank),
            "LOCAL_RANK": str(self.local_rank),
            "LOCAL_WORLD_SIZE": str(self.local_world_size),
            "NODE_RANK": str(self.node_rank),
            "GROUP_RANK": str(self.node_rank),
        }


def _nproc(info: ClusterInfo, nproc_per_node: int | None) -> int:
    if nproc_per_node is not None:
        if isinstance(nproc_per_node, bool) or not isinstance(nproc_per_node, int):
            raise UsageError("not an integer", source="nproc_per_node", value=nproc_per_node)
        if nproc_per_node < 1:
            raise UsageError("must be at least 1", source="nproc_per_node", value=nproc_per_node)
        return nproc_per_node
    # torchrun inside a platform replica: it said how many processes share this machine.
    # A hint alone (Kubeflow's PET_NPROC_PER_NODE without torchrun) does not start processes.
    if info.local_rank is not None and info.local_world_size:
        return info.local_world_size
    return 1


def _master(info: ClusterInfo, environ: Mapping[str, str]) -> tuple[str, int]:
    # The platform's own MASTER_ADDR/PORT first (Vertex sets them for PyTorch and keeps
    # that port open for it), then the chief's address, then one machine's default.
    if environ.get("MASTER_ADDR") and environ.get("MASTER_PORT"):
        address = f"{environ['MASTER_ADDR']}:{environ['MASTER_PORT']}"
    else:
        address = info.chief_address or "{}:{}".format(*LOCAL_MASTER)
    host, _, port_text = address.rpartition(":")
    if not port_text.isdigit():
        raise UsageError("no port", source="MASTER_PORT", value=address, expected="host:port")
    return host.strip("[]"), int(port_text)
