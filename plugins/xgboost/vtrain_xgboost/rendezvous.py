"""Where this replica meets the others: the tracker's address, its task id, the world's size.

Pure arithmetic on a `ClusterInfo`; no XGBoost. The chief hosts XGBoost's
tracker, reached through its own address from the cluster (that port names the
tracker's, see `tracker`); every trainer enters the collective there. The tracker ranks workers by
sorting their task ids as strings, so each id is the vtrain rank, zero-padded to
one width: "02" sorts before "10" where "2" would not, and tracker rank then
equals platform rank, which fixes each replica's shard of the data.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from vtrain import ClusterInfo, ConfigError, UsageError
from vtrain.plugins.wait import split_address

# The variable (or reader) each source takes the chief's address from, for error messages.
ADDRESS_SOURCES = {
    "cluster_spec": "CLUSTER_SPEC: cluster",
    "tf_config": "TF_CONFIG: cluster",
    "torch_env": "MASTER_ADDR:MASTER_PORT",
    "torchrun": "MASTER_ADDR:MASTER_PORT",
}
# The variable that sized the world, for the error when fewer trainers come than it says.
WORLD_SOURCES = {
    "cluster_spec": "CLUSTER_SPEC: cluster",
    "tf_config": "TF_CONFIG: cluster",
    "torch_env": "WORLD_SIZE",
    "torchrun": "WORLD_SIZE",
}
# The tracker listens on every interface when the cluster names the chief by host name:
# that name may not resolve on the chief itself before its platform publishes it.
ALL_INTERFACES = "0.0.0.0"


def task_id(rank: int, world_size: int) -> str:
    """`rank` zero-padded to the width of the largest rank of `world_size`, so string order is
    rank order."""
    return str(rank).zfill(len(str(max(0, world_size - 1))))


def address_source(info: ClusterInfo) -> str:
    """Where `info` took the chief's address from, as errors name it."""
    return ADDRESS_SOURCES.get(info.source, info.source)


def world_source(info: ClusterInfo) -> str:
    """Where `info` took the number of trainers from, as errors name it."""
    return WORLD_SOURCES.get(info.source, info.source)


@dataclass(frozen=True)
class Rendezvous:
    """The collective coordinates of one trainer; `tracker_host` is None in a world of one."""

    rank: int
    """This trainer's rank in the collective: the cluster's, chief 0."""
    world_size: int
    """The trainers in the collective."""
    task_id: str
    """DMLC_TASK_ID: the rank, zero-padded so that string order is rank order (`task_id`)."""
    tracker_host: str | None
    tracker_port: int | None
    """The port of the chief's tracker, from the chief's address; None in a world of one."""
    bind_host: str | None
    """Where the chief's tracker listens: the chief's IPv4 address, or every interface."""
    address_source: str = ""
    """The variable that gave the chief's address (CLUSTER_SPEC, MASTER_ADDR …), for errors."""
    world_source: str = ""
    """The variable that sized the world (WORLD_SIZE, CLUSTER_SPEC …), for errors."""

    @classmethod
    def from_cluster(cls, info: ClusterInfo) -> Rendezvous:
        """This trainer's coordinates; `info` must describe a chief or a worker."""
        if info.rank is None:
            raise UsageError(
                f"a {info.role} replica is not part of the XGBoost collective",
                source="ClusterInfo.role",
                value=info.role,
                expected="chief or worker",
            )
        world = info.num_trainers
        if world == 1:
            return cls(0, 1, task_id(0, 1), None, None, None)
        where = address_source(info)
        if info.chief_address is None:
            raise ConfigError(
                "the chief's address is unknown, and XGBoost's tracker runs there",
                source=where,
                value=None,
                expected="host:port of the chief (or master) replica",
            )
        host, port = split_address(info.chief_address, where)
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None and literal.version == 6:
            raise ConfigError(
                "XGBoost's tracker listens on IPv4 only",
                source=where,
                value=info.chief_address,
                expected="an IPv4 address or a host name for the chief",
            )
        bind = host if literal is not None else ALL_INTERFACES
        return cls(
            info.rank, world, task_id(info.rank, world), host, port, bind, where, world_source(info)
        )

    @property
    def distributed(self) -> bool:
        """True when more than one trainer meets at a tracker."""
        return self.world_size > 1

    @property
    def hosts_tracker(self) -> bool:
        """True on rank 0 of a distributed world: the chief (or worker 0 without one)."""
        return self.distributed and self.rank == 0

    @property
    def tracker_address(self) -> str | None:
        """``host:port`` of the tracker, or None in a world of one."""
        return None if self.tracker_host is None else f"{self.tracker_host}:{self.tracker_port}"

    def environment(self) -> dict[str, str | None]:
        """The DMLC_* variables XGBoost's own launchers set; removed in a world of one.

        XGBoost 3 takes these as arguments (configure passes them); they are set
        for code of the user's that still reads them, as dmlc-submit's did.
        """
        if not self.distributed:
            return dict.fromkeys(DMLC_VARIABLES)
        return {
            "DMLC_TRACKER_URI": self.tracker_host,
            "DMLC_TRACKER_PORT": str(self.tracker_port),
            "DMLC_TASK_ID": self.task_id,
            "DMLC_NUM_WORKER": str(self.world_size),
        }


DMLC_VARIABLES = ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER")
__all__ = ["Rendezvous", "address_source", "task_id", "world_source"]
