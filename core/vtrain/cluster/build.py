"""The checks every source passes through before it becomes a `ClusterInfo`.

Each reader (CLUSTER_SPEC, TF_CONFIG, torchrun, Kubeflow) only translates its
own format; the rules that make a cluster valid live here, once. What a reader
returns is the checked fields, and `ClusterInfo.from_env` makes the value: so
the readers sit below the value's module, not beside it in a cycle.
"""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.cluster.fields import address_key
from vtrain.cluster.roles import CHIEF, EVALUATOR, WORKER
from vtrain.errors import ConfigError

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def checked(
    variable: str,
    *,
    source: str,
    platform: str | None = None,
    cluster: Mapping[str, tuple[str | None, ...]],
    role: str,
    index: int,
    role_names: Mapping[str, str],
    trial_id: str | None = None,
    job: Mapping[str, Any] | None = None,
    evaluator_outside: bool = False,
    sparse: bool = False,
    **process: int | None,
) -> dict[str, Any]:
    """A `ClusterInfo`'s fields, whose cluster, role and index agree with each other.

    `evaluator_outside` allows an evaluator that is not listed in the cluster:
    Vertex writes TF_CONFIG that way on purpose, because a ParameterServerStrategy
    hangs when the evaluator is inside the training cluster.
    """
    cluster = {r: a for r, a in cluster.items() if a}
    if not cluster:
        raise ConfigError(
            "the cluster is empty",
            source=variable,
            path="cluster",
            expected="at least one role with one address",
        )
    if len(cluster.get(CHIEF, ())) > 1:
        raise ConfigError(
            f"{len(cluster[CHIEF])} chiefs",
            source=variable,
            path=f"cluster.{role_names.get(CHIEF, CHIEF)}",
            value=list(cluster[CHIEF]),
            expected="exactly one chief",
            hint="extra replicas belong in the worker pool",
        )
    # A sparse cluster may list no trainer at all: a Kubeflow dynamic ps sees only itself.
    if not sparse and CHIEF not in cluster and WORKER not in cluster:
        raise ConfigError(
            "the cluster has no chief and no worker, so nothing would train",
            source=variable,
            path="cluster",
            value=sorted(role_names.get(r, r) for r in cluster),
        )
    replicas = cluster.get(role)
    if replicas is None and not (role == EVALUATOR and evaluator_outside):
        raise ConfigError(
            f'task type "{role_names.get(role, role)}" is not in the cluster',
            source=variable,
            path="task.type",
            value=role_names.get(role, role),
            expected="one of " + ", ".join(repr(role_names.get(r, r)) for r in cluster),
        )
    if replicas is not None and index >= len(replicas):
        name = role_names.get(role, role)
        raise ConfigError(
            f'{index} is out of range for role "{name}" ({len(replicas)} replicas)',
            source=variable,
            path="task.index",
            value=index,
            expected=f"an index from 0 to {len(replicas) - 1}",
        )
    if sparse and replicas is not None and replicas[index] is None:
        name = role_names.get(role, role)
        raise ConfigError(
            f'task {index} of role "{name}" is not listed in the sparse cluster',
            source=variable,
            path="task.index",
            value=index,
            expected="the index of a listed task: "
            + ", ".join(str(i) for i, a in enumerate(replicas) if a is not None),
        )
    _check_unique(variable, cluster, role_names)
    return dict(
        cluster=cluster,
        role=role,
        index=index,
        source=source,
        platform=platform,
        role_names={r: n for r, n in role_names.items() if r in cluster or r == role},
        trial_id=trial_id,
        job=job,
        sparse=sparse,
        **process,
    )


def _check_unique(
    variable: str, cluster: Mapping[str, tuple[str | None, ...]], role_names: Mapping[str, str]
) -> None:
    # Two replicas on one address would both try to bind it; fail here, not in a hang later.
    # Host names are case-blind and "01" is port 1, so H:1 and h:01 are one address.
    seen: dict[tuple[str, int | str], str] = {}
    for role, replicas in cluster.items():
        for i, a in enumerate(replicas):
            if a is None:
                continue
            where = f"cluster.{role_names.get(role, role)}[{i}]"
            key = address_key(a)
            if key in seen:
                raise ConfigError(
                    f"address used by two replicas ({seen[key]} and {where})",
                    source=variable,
                    path=where,
                    value=a,
                    expected="a distinct host:port per replica",
                )
            seen[key] = where
