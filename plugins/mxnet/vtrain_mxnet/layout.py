"""Where MXNet's scheduler, servers and workers run in a job, from the ClusterInfo alone.

AI Platform's guide maps MXNet onto the platform's pools: the master (Vertex
workerpool0) is the scheduler, the workers (workerpool1) are workers, the
parameter servers (workerpool2) are servers; evaluators stay out of the
kvstore. Two placements change that on request: `chief_trains` runs the
scheduler as a child process of the chief, which then trains as a worker too;
`servers_beside_workers` gives every training replica a server child process
when the job has no parameter servers. Nothing here imports MXNet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from vtrain import ClusterInfo, ConfigError, LaunchError
from vtrain.cluster import CHIEF, PS, WORKER
from vtrain.cluster.leader import Replica
from vtrain.plugins.wait import split_address

SCHEDULER = "scheduler"
SERVER = "server"
SERVICE_ROLES = (SCHEDULER, SERVER)
DMLC_WORKER = "worker"

# Every DMLC variable vtrain writes; a replica outside the kvstore gets none of them.
WRITTEN = (
    "DMLC_ROLE",
    "DMLC_PS_ROOT_URI",
    "DMLC_PS_ROOT_PORT",
    "DMLC_NUM_SERVER",
    "DMLC_NUM_WORKER",
    "DMLC_NODE_HOST",
)
INTERFACE = "DMLC_INTERFACE"
VERBOSE = "PS_VERBOSE"
VERBOSE_LEVELS = ("0", "1", "2")

# The variable that described the cluster, for messages: ClusterInfo.source -> its name.
_VARIABLES = {"cluster_spec": "CLUSTER_SPEC", "tf_config": "TF_CONFIG"}


def described_by(info: ClusterInfo) -> str:
    """The variable the cluster was read from (CLUSTER_SPEC, TF_CONFIG …), for messages."""
    return _VARIABLES.get(info.source, info.source)


@dataclass(frozen=True)
class Layout:
    """This replica's part in MXNet's parameter-server job."""

    role: str | None
    """DMLC_ROLE of this replica's own process (scheduler, server, worker); None off the kvstore."""
    children: tuple[str, ...]
    """DMLC roles this replica also runs, each as a child process: scheduler and/or server."""
    scheduler: tuple[str, int] | None
    """(host, port) of the scheduler; None when the job does not use a dist kvstore."""
    num_servers: int
    """DMLC_NUM_SERVER: the kvstore's servers (0 off the kvstore)."""
    num_workers: int
    """DMLC_NUM_WORKER: the replicas that train through the kvstore (0 off it)."""
    node_host: str | None
    """This replica's host as the cluster names it; None where the source gives no address."""
    leader: Replica | None
    """The replica that leads as far as the cluster tells; see `leader_by_rank`."""
    leader_by_rank: bool
    """True when MXNet's worker rank 0 leads: the scheduler assigns it once the workers join."""

    @classmethod
    def from_cluster(
        cls,
        info: ClusterInfo,
        *,
        chief_trains: bool = False,
        servers_beside_workers: bool = False,
    ) -> Layout:
        """The layout of this replica of `info`: the documented mapping, or one of the two
        placements the options ask for.

        `chief_trains` runs the scheduler as a child process of the chief, which then
        trains as a worker too; `servers_beside_workers` gives every training replica a
        server child process, for a job without parameter servers. A cluster these
        cannot lay out (no chief, nobody training, no servers, no chief address)
        raises `ConfigError`.
        """
        chiefs = info.cluster.get(CHIEF, ())
        workers = info.cluster.get(WORKER, ())
        servers = info.cluster.get(PS, ())
        if not workers and not servers:
            # One trainer (a chief alone, maybe beside evaluators): no kvstore to set up.
            leader: Replica | None = (CHIEF, 0) if chiefs else None
            return cls(None, (), None, 0, 0, None, leader, False)
        where = described_by(info)
        if not chiefs:
            raise ConfigError(
                "MXNet's scheduler runs on the chief, and the cluster has none",
                source=where,
                value=sorted(info.cluster),
                expected="a chief (AI Platform master, Vertex workerpool0, TF_CONFIG chief)",
                hint="add a primary replica: it schedules, or trains too with chief_trains=True",
            )
        num_workers = len(workers) + (1 if chief_trains else 0)
        if num_workers == 0:
            raise ConfigError(
                "nobody trains: the chief only schedules and the job has no workers",
                source=where,
                value=sorted(info.cluster),
                expected="workers (AI Platform worker, Vertex workerpool1)",
                hint="add workers, or let the chief train with chief_trains=True",
            )
        if servers_beside_workers and servers:
            raise ConfigError(
                f"servers beside the workers are for jobs without parameter servers, "
                f"and this one has {len(servers)}",
                source="servers_beside_workers",
                value=True,
                expected="False when the job has ps (workerpool2) replicas",
                hint="drop the option, or the parameter-server pool",
            )
        num_servers = num_workers if servers_beside_workers else len(servers)
        if num_servers == 0:
            raise ConfigError(
                "MXNet's dist kvstore needs servers, and the job has no parameter servers",
                source=where,
                value=sorted(info.cluster),
                expected="ps replicas (AI Platform ps, Vertex workerpool2)",
                hint="add a parameter-server pool, or run a server beside each training "
                "replica with servers_beside_workers=True",
            )
        if chiefs[0] is None:
            raise ConfigError(
                "the chief's address is unknown, and MXNet's scheduler listens there",
                source=where,
                value=info.source,
                expected="a source that names every replica's host:port (CLUSTER_SPEC, TF_CONFIG)",
            )
        scheduler = _address(chiefs[0], f"{where}: the chief's address")
        node_host = None
        if info.address is not None:
            node_host = _address(info.address, f"{where}: this replica's address")[0]

        role: str | None = None
        children: tuple[str, ...] = ()
        if info.role == CHIEF:
            role = DMLC_WORKER if chief_trains else SCHEDULER
            children = (SCHEDULER,) if chief_trains else ()
        elif info.role == WORKER:
            role = DMLC_WORKER
        elif info.role == PS:
            role = SERVER
        if role == DMLC_WORKER and servers_beside_workers:
            children += (SERVER,)
        # With the chief training, the chief leads, as everywhere else in vtrain. With the
        # documented mapping MXNet's worker rank 0 leads: worker 0 until the scheduler says.
        leader = (CHIEF, 0) if chief_trains else (WORKER, 0)
        return cls(
            role, children, scheduler, num_servers, num_workers, node_host, leader, not chief_trains
        )

    @property
    def distributed(self) -> bool:
        """True when the job runs MXNet's dist kvstore."""
        return self.scheduler is not None

    @property
    def serves(self) -> bool:
        """True for a replica that runs MXNet's scheduler or a server until the job ends."""
        return self.role in SERVICE_ROLES

    def variables(self, environ: Mapping[str, str]) -> dict[str, str | None]:
        """The DMLC variables for this replica; None removes one (off the kvstore).

        DMLC_INTERFACE and PS_VERBOSE are read from `environ` and kept, or refused with
        `ConfigError` where ps-lite would misread them.
        """
        passed = _checked_pass_through(environ)
        if self.role is None or self.scheduler is None:
            return dict.fromkeys(WRITTEN, None)
        host, port = self.scheduler
        return {
            "DMLC_ROLE": self.role,
            "DMLC_PS_ROOT_URI": host,
            "DMLC_PS_ROOT_PORT": str(port),
            "DMLC_NUM_SERVER": str(self.num_servers),
            "DMLC_NUM_WORKER": str(self.num_workers),
            # ps-lite prefers DMLC_NODE_HOST to DMLC_INTERFACE: a chosen interface must win.
            "DMLC_NODE_HOST": None if INTERFACE in passed else self.node_host,
        }


def _address(address: str, source: str) -> tuple[str, int]:
    try:
        return split_address(address, source)
    except LaunchError as e:
        raise ConfigError(e.problem, source=source, value=address, expected="host:port") from None


def _checked_pass_through(environ: Mapping[str, str]) -> dict[str, str]:
    """DMLC_INTERFACE and PS_VERBOSE as the user set them; refused when ps-lite would misread."""
    passed = {k: environ[k] for k in (INTERFACE, VERBOSE) if k in environ}
    if INTERFACE in passed and not passed[INTERFACE].strip():
        raise ConfigError(
            "empty network interface",
            source=INTERFACE,
            value=passed[INTERFACE],
            expected="an interface name such as eth0",
            hint=f"unset {INTERFACE} to use the host the cluster names",
        )
    if VERBOSE in passed and passed[VERBOSE] not in VERBOSE_LEVELS:
        raise ConfigError(
            "not a ps-lite log level",
            source=VERBOSE,
            value=passed[VERBOSE],
            expected="0, 1 or 2",
        )
    return passed
