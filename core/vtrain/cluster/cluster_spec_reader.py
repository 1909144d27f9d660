"""CLUSTER_SPEC, as Vertex AI (workerpool0..3) and legacy AI Platform (master/worker/…) write it."""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.cluster import fields
from vtrain.cluster.build import checked
from vtrain.cluster.roles import NAMED_ROLES, REDUCTION_SERVER, VERTEX_POOLS
from vtrain.errors import ConfigError

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "cluster_spec"
VARIABLE = "CLUSTER_SPEC"
WORKER_POOLS = "worker_pools"
_REDUCTION_SERVER_POOL = 2


def present(environ: Mapping[str, str]) -> bool:
    """True when CLUSTER_SPEC lists a task: ``{}`` or an empty cluster is none, as for the SDK."""
    return fields.lists_a_task(environ, VARIABLE, lambda doc: doc.get("cluster"))


def read(environ: Mapping[str, str]) -> dict[str, Any]:
    """The cluster CLUSTER_SPEC describes."""
    return parse(environ[VARIABLE])


def parse(text: str | bytes, variable: str = VARIABLE) -> dict[str, Any]:
    """Parse a CLUSTER_SPEC document from either platform."""
    doc = fields.mapping(variable, "", fields.parse_json(variable, text))
    raw_cluster = fields.mapping(variable, "cluster", _required(variable, doc, "cluster"))
    task = fields.mapping(variable, "task", _required(variable, doc, "task"))
    job = fields.optional_mapping(variable, "job", doc.get("job"))
    if WORKER_POOLS in raw_cluster:
        raw_cluster, task = _from_pool_list(variable, raw_cluster, task)

    task_type = fields.string(variable, "task.type", _required(variable, task, "type", "task."))
    vertex = (
        any(k in VERTEX_POOLS for k in (*raw_cluster, task_type))
        or _pool_specs(variable, job) is not None
    )
    names = dict(VERTEX_POOLS, **{"chief": "chief"}) if vertex else NAMED_ROLES
    if vertex and _is_reduction_server(variable, job):
        names["workerpool2"] = REDUCTION_SERVER

    cluster: dict[str, tuple[str | None, ...]] = {}
    role_names: dict[str, str] = {}
    for key, value in raw_cluster.items():
        role = fields.role(variable, f"cluster.{key}", key, names)
        cluster[role] = cluster.get(role, ()) + fields.addresses(variable, f"cluster.{key}", value)
        role_names[role] = key

    role = fields.role(variable, "task.type", task_type, names)
    role_names.setdefault(role, task_type)
    return checked(
        variable,
        source=NAME,
        platform="vertex" if vertex else "aiplatform",
        cluster=cluster,
        role=role,
        index=fields.index(variable, "task.index", task.get("index", 0)),
        role_names=role_names,
        trial_id=fields.trial(variable, "task.trial", task.get("trial")),
        job=job,
    )


def _from_pool_list(
    variable: str, cluster: Mapping[str, Any], task: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Vertex's list form, as the SDK's own tests write it, in the named form.

    ``{"cluster": {"worker_pools": [{"index": 0, "replicas": [...]}, ...]},
    "task": {"worker_pool_index": 0, "replica_index": 0}}`` names the same pools
    by position that the usual form names ``workerpool0`` …
    """
    pools = cluster[WORKER_POOLS]
    if not isinstance(pools, list) or len(cluster) != 1:
        raise ConfigError(
            "not a list of worker pools",
            source=variable,
            path=f"cluster.{WORKER_POOLS}",
            value=pools if len(cluster) == 1 else sorted(cluster),
            expected='[{"index": 0, "replicas": ["host:port", …]}, …] and no other key',
        )
    named: dict[str, Any] = {}
    for i, pool in enumerate(pools):
        where = f"cluster.{WORKER_POOLS}[{i}]"
        pool = fields.mapping(variable, where, pool)
        position = fields.index(variable, f"{where}.index", pool.get("index", i))
        named[f"workerpool{position}"] = pool.get("replicas", [])
    task = dict(task)
    if "worker_pool_index" in task:
        position = fields.index(variable, "task.worker_pool_index", task.pop("worker_pool_index"))
        task.setdefault("type", f"workerpool{position}")
        task.setdefault("index", task.pop("replica_index", 0))
    return named, task


def _required(variable: str, doc: Mapping[str, Any], key: str, prefix: str = "") -> Any:
    if key not in doc or doc[key] is None:
        raise ConfigError(
            f"missing key {prefix + key!r}",
            source=variable,
            expected='{"cluster": {…}, "task": {"type": …, "index": …}}',
        )
    return doc[key]


def _pool_specs(variable: str, job: Mapping[str, Any] | None) -> list[Any] | None:
    """The CustomJobSpec's worker pool list, in either JSON spelling, or None."""
    if job is None:
        return None
    spec = job.get("jobSpec", job.get("job_spec", job))
    if not isinstance(spec, Mapping):
        return None
    pools = spec.get("workerPoolSpecs", spec.get("worker_pool_specs"))
    if pools is None:
        return None
    if not isinstance(pools, list):
        raise ConfigError("not a list", source=variable, path="job.workerPoolSpecs", value=pools)
    return pools


def _is_reduction_server(variable: str, job: Mapping[str, Any] | None) -> bool:
    # Vertex gives Reduction Server replicas the parameter-server pool; only the image tells.
    pools = _pool_specs(variable, job) or []
    if len(pools) <= _REDUCTION_SERVER_POOL or not isinstance(
        pools[_REDUCTION_SERVER_POOL], Mapping
    ):
        return False
    pool = pools[_REDUCTION_SERVER_POOL]
    container = pool.get("containerSpec", pool.get("container_spec"))
    if not isinstance(container, Mapping):
        return False
    image = container.get("imageUri", container.get("image_uri"))
    return isinstance(image, str) and "reductionserver" in image
