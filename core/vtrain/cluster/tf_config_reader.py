"""TF_CONFIG, as Vertex, AI Platform, Kubeflow TFJob and `gcloud … local train` write it."""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.cluster import fields
from vtrain.cluster.build import checked
from vtrain.cluster.roles import NAMED_ROLES
from vtrain.errors import ConfigError

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "tf_config"
VARIABLE = "TF_CONFIG"
SPARSE_KEY = "sparseCluster"


def present(environ: Mapping[str, str]) -> bool:
    """False for a TF_CONFIG that lists no task in a cluster, which TensorFlow runs alone.

    That is ``{}``, a cluster of empty roles, or a task with no cluster at all.
    """
    return fields.lists_a_task(environ, VARIABLE, lambda doc: _cluster_of(doc)[1])


def _cluster_of(doc: Mapping[str, Any]) -> tuple[str, Any]:
    """The key and value of the document's cluster: `cluster`, else Kubeflow's `sparseCluster`.

    Kubeflow's TFJob with `enableDynamicWorker` writes `sparseCluster`, where each
    replica sees only itself among the workers (and the parameter servers).
    """
    if not doc.get("cluster") and doc.get(SPARSE_KEY):
        return SPARSE_KEY, doc[SPARSE_KEY]
    return "cluster", doc.get("cluster") or {}


def read(environ: Mapping[str, str]) -> dict[str, Any]:
    """The cluster TF_CONFIG describes."""
    return parse(environ[VARIABLE])


def _own_task_in_place(cluster: Mapping[str, Any], task: Mapping[str, Any]) -> dict[str, Any]:
    """Kubeflow's sparse ps entry, ``"ps": [own address]``, at the task's real index.

    The operator (convertClusterSpecToSparseClusterSpec) gives a parameter server
    a list holding only its own address, while its task index stays the real one.
    """
    cluster = dict(cluster)
    kind, index = task.get("type"), task.get("index", 0)
    if not isinstance(kind, str):
        return cluster
    own = cluster.get(kind)
    if isinstance(own, list) and len(own) == 1 and isinstance(index, int) and index > 0:
        cluster[kind] = {str(index): own[0]}
    return cluster


def parse(text: str | bytes, variable: str = VARIABLE) -> dict[str, Any]:
    """Parse a TF_CONFIG document.

    `environment: "cloud"` is ignored: `gcloud ai-platform local train` writes it
    on a laptop too, so it proves nothing about where we run.
    """
    doc = fields.mapping(variable, "", fields.parse_json(variable, text))
    cluster_key, value = _cluster_of(doc)
    raw_cluster = fields.mapping(variable, cluster_key, value)
    task = fields.mapping(variable, "task", doc.get("task") or {})

    cluster: dict[str, tuple[str | None, ...]] = {}
    role_names: dict[str, str] = {}
    # A role given as {"index": address} lists some of its tasks, not all of them.
    sparse = cluster_key == SPARSE_KEY
    if sparse:
        raw_cluster = _own_task_in_place(raw_cluster, task)
    for key, value in raw_cluster.items():
        role = fields.role(variable, f"{cluster_key}.{key}", key, NAMED_ROLES)
        where = f"{cluster_key}.{key}"
        cluster[role] = cluster.get(role, ()) + fields.addresses(variable, where, value)
        role_names[role] = key
        sparse = sparse or isinstance(value, Mapping)

    if "type" not in task:
        raise ConfigError(
            "missing key 'task.type'",
            source=variable,
            expected='"task": {"type": "chief"|"worker"|"ps"|"evaluator", "index": N}',
        )
    task_type = fields.string(variable, "task.type", task["type"])
    role = fields.role(variable, "task.type", task_type, NAMED_ROLES)
    role_names.setdefault(role, task_type)
    return checked(
        variable,
        source=NAME,
        cluster=cluster,
        role=role,
        index=fields.index(variable, "task.index", task.get("index", 0)),
        role_names=role_names,
        trial_id=fields.trial(variable, "task.trial", task.get("trial")),
        job=fields.optional_mapping(variable, "job", doc.get("job")),
        evaluator_outside=True,
        sparse=sparse,
    )
