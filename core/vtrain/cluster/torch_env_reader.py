"""torch's env:// variables (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK) as Kubeflow sets them.

Kubeflow's PyTorchJob gives one RANK per pod (master 0, worker i -> i+1) but sets
WORLD_SIZE to pods x processes per pod (PET_NPROC_PER_NODE when it is a number,
else 1); read naively, two machines of 8 processes look like 16 machines. Here a
replica is a pod, so the machine count is WORLD_SIZE / PET_NPROC_PER_NODE.
PET_NNODES sizes nothing: it is meant for torchrun, and with an elastic policy it
is the workers' range ("1:4"), or their count beside a Master, not the pods that
exist. XGBoostJob adds the workers' hosts in WORKER_ADDRS and their port in
WORKER_PORT.
"""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.cluster import fields
from vtrain.cluster.build import checked
from vtrain.cluster.roles import CHIEF, WORKER
from vtrain.errors import ConfigError, ConflictError

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "torch_env"
_KUBEFLOW_MARKERS = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR", "WORKER_ADDRS")


def present(environ: Mapping[str, str]) -> bool:
    """True when RANK or WORLD_SIZE is set: MASTER_ADDR alone describes no cluster."""
    return bool(environ.get("RANK") or environ.get("WORLD_SIZE"))


def platform(environ: Mapping[str, str]) -> str | None:
    """Who set RANK and friends: "kubeflow" when its operator's own variables are there too."""
    return "kubeflow" if any(environ.get(m) for m in _KUBEFLOW_MARKERS) else None


def master_address(
    environ: Mapping[str, str],
    host_name: str = "MASTER_ADDR",
    port_name: str = "MASTER_PORT",
    why: str = "RANK/WORLD_SIZE are",
) -> str:
    """The chief's address from a host variable and a port variable (MASTER_ADDR and
    MASTER_PORT, or a TrainJob runtime's), checked; `why` says what made them needed."""
    # Surrounding blanks are ignored, as for RANK and WORLD_SIZE (and as torch's int() does).
    host = environ.get(host_name, "").strip(fields.BLANKS)
    port = environ.get(port_name, "").strip(fields.BLANKS)
    if not host or not port:
        missing = " and ".join(n for n, v in ((host_name, host), (port_name, port)) if not v)
        raise ConfigError(
            f"is not set, but {why}",
            source=missing,
            expected=f"the chief's host in {host_name} and its port in {port_name}",
        )
    if not fields.is_host(host):
        # A bare IPv6 address is the one host with a ':' in it; a URL or a host:port is not one.
        if ":" not in host or not fields.is_host(f"[{host}]"):
            raise ConfigError(
                "not a host name or IP address",
                source=host_name,
                value=host,
                expected="the chief's host alone, e.g. 10.0.0.1 or cmle-training-workerpool0-ab-0",
                hint=f"no scheme (tcp://) and no port: the port goes in {port_name}",
            )
        host = f"[{host}]"
    return fields.address(f"{host_name}:{port_name}", "", f"{host}:{port}")


def rank_in_world(
    environ: Mapping[str, str], rank_name: str, world_name: str, why: str
) -> tuple[int, int]:
    """(rank, world size) from two variables that `why` needs, the rank below the world."""
    world = fields.env_required_int(environ, world_name, why, minimum=1)
    rank = fields.env_required_int(environ, rank_name, why)
    if world > fields.MAX_REPLICAS:
        raise ConfigError("implausibly large", source=world_name, value=world)
    if rank >= world:
        raise out_of_range(rank_name, rank, world_name, world)
    return rank, world


def out_of_range(name: str, value: int, limit_name: str, limit: int) -> ConfigError:
    """The error for a rank that is not below its world size."""
    return ConfigError(
        f"{value} is out of range for {limit_name} {limit}",
        source=name,
        value=value,
        expected=f"a value from 0 to {limit - 1}",
    )


def read(environ: Mapping[str, str]) -> dict[str, Any]:
    """A cluster from env:// variables; a replica is a machine (a pod)."""
    why = "RANK or WORLD_SIZE is set"
    world = fields.env_required_int(environ, "WORLD_SIZE", why, minimum=1)
    rank = fields.env_required_int(environ, "RANK", why)
    nproc = _nproc(environ)
    if nproc and world % nproc:
        raise ConflictError(
            f"WORLD_SIZE {world} is not a multiple of PET_NPROC_PER_NODE {nproc}",
            source="WORLD_SIZE",
            value=world,
        )
    nnodes = world // nproc if nproc else world
    if nnodes > fields.MAX_REPLICAS:
        raise ConfigError("implausibly large", source="WORLD_SIZE", value=world)
    if rank >= nnodes:
        raise out_of_range("RANK", rank, "machines (WORLD_SIZE / processes per machine)", nnodes)

    return checked(
        "RANK/WORLD_SIZE",
        source=NAME,
        platform=platform(environ),
        cluster={CHIEF: (master_address(environ),), WORKER: _workers(environ, nnodes - 1)},
        role=CHIEF if rank == 0 else WORKER,
        index=0 if rank == 0 else rank - 1,
        role_names={CHIEF: "master", WORKER: "worker"},
        local_world_size=nproc,
    )


def _nproc(environ: Mapping[str, str]) -> int | None:
    # "auto", "cpu" and "gpu" are resolved by torchrun inside the pod; unknown here.
    text = environ.get("PET_NPROC_PER_NODE", "")
    return fields.env_int(environ, "PET_NPROC_PER_NODE", minimum=1) if text.isdigit() else None


def _workers(environ: Mapping[str, str], count: int) -> tuple[str | None, ...]:
    blanks = fields.BLANKS
    hosts = [h.strip(blanks) for h in environ.get("WORKER_ADDRS", "").split(",") if h.strip(blanks)]
    port = environ.get("WORKER_PORT", "")
    if hosts and port and len(hosts) == count:
        return tuple(
            fields.address("WORKER_ADDRS", f"[{i}]", f"{h}:{port}") for i, h in enumerate(hosts)
        )
    return (None,) * count
