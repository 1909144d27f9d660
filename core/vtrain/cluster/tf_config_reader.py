"""TF_CONFIG, as Vertex, AI Platform, Kubeflow TFJob and `gcloud … local train` write it."""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.cluster import fields
from vtrain.cluster.build import checked
from vtrain.cluster.info import ClusterInfo
from vtrain.cluster.roles import NAMED_ROLES
from vtrain.errors import ConfigError

NAME = "tf_config"
VARIABLE = "TF_CONFIG"


def present(environ: Mapping[str, str]) -> bool:
    """False for a TF_CONFIG unset or saying nothing (``{}``), which TensorFlow runs locally."""
    text = environ.get(VARIABLE)
    if not text:
        return False
    try:
        doc = fields.parse_json(VARIABLE, text)
    except ConfigError:
        return True  # malformed: let the reader report it
    return not isinstance(doc, dict) or bool(doc.get("cluster") or doc.get("task"))


def read(environ: Mapping[str, str]) -> ClusterInfo:
    """The cluster TF_CONFIG describes."""
    return parse(environ[VARIABLE])


def parse(text: str | bytes, variable: str = VARIABLE) -> ClusterInfo:
    """Parse a TF_CONFIG document.

    `environment: "cloud"` is ignored: `gcloud ai-platform local train` writes it
    on a laptop too, so it proves nothing about where we run.
    """
    doc = fields.mapping(variable, "", fields.parse_json(variable, text))
    raw_cluster = fields.mapping(variable, "cluster", doc.get("cluster") or {})
    task = fields.mapping(variable, "task", doc.get("task") or {})

    cluster: dict[str, tuple[str | None, ...]] = {}
    role_names: dict[str, str] = {}
    for key, value in raw_cluster.items():
        role = fields.role(variable, f"cluster.{key}", key, NAMED_ROLES)
        cluster[role] = cluster.get(role, ()) + fields.addresses(variable, f"cluster.{key}", value)
        role_names[role] = key

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
    )
