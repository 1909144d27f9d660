"""The leader: the one replica that writes shared artifacts (tuning metric, checkpoints, model).

It is the chief, or worker 0 where there is no chief, unless a plugin says
otherwise: under MXNet's documented mapping the chief is the scheduler, which
never trains, so worker 0 leads. A plugin's `configure()` exports its choice in
VTRAIN_LEADER, so that `hypertune.report`, `CheckpointManager` and model saving
follow it in this process and in every process it starts.
"""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.cluster.fields import BLANKS, natural
from vtrain.cluster.info import ClusterInfo
from vtrain.cluster.roles import CHIEF, ROLES, WORKER
from vtrain.errors import ConfigError
from vtrain.variables import LEADER as VARIABLE

Replica = tuple[str, int]
"""(role, index), in vtrain's role names."""


def default_leader(info: ClusterInfo) -> Replica | None:
    """The first trainer: the chief, else worker 0; None in a cluster that trains nowhere."""
    for role in (CHIEF, WORKER):
        if info.cluster.get(role):
            return (role, 0)
    return None


def encode(leader: Replica) -> str:
    """The VTRAIN_LEADER value for `leader`: ``role:index``."""
    return f"{leader[0]}:{leader[1]}"


def exported_leader(info: ClusterInfo, environ: Mapping[str, str]) -> Replica | None:
    """The leader VTRAIN_LEADER names, checked against the cluster; None when it is unset."""
    text = environ.get(VARIABLE, "").strip(BLANKS)
    if not text:
        return None
    role, _, digits = text.partition(":")
    index = natural(digits)
    if role not in ROLES or index is None:
        raise ConfigError(
            "not a replica",
            source=VARIABLE,
            value=text,
            expected="role:index with a role of " + ", ".join(ROLES) + " (e.g. worker:0)",
        )
    count = len(info.cluster.get(role, ()))
    if index >= count:
        raise ConfigError(
            f"the cluster has {count} {role} replica(s)",
            source=VARIABLE,
            value=text,
            expected="a replica of this cluster",
            hint=f"a stale {VARIABLE} from another job? unset it",
        )
    return (role, index)


def leads(info: ClusterInfo, environ: Mapping[str, str]) -> bool:
    """True on the leader's one leading process.

    The default leader is the chief, which `ClusterInfo.is_chief` pins to one
    process (torchrun's RANK 0 under torchrun). A leader a plugin chose is a
    replica; of its processes, local process 0 leads.
    """
    default = default_leader(info)
    leader = exported_leader(info, environ) or default
    if leader == default:
        return info.is_chief
    return leader == (info.role, info.index) and not info.local_rank
