"""The TF_CONFIG that TensorFlow 2 strategies accept, written from a ClusterInfo.

TF2 rejects the task type "master" that AI Platform writes ("Disallowed task
type"), allows one chief and one evaluator, and a ParameterServerStrategy hangs
when the evaluator sits inside the training cluster. So: the chief is "chief",
the evaluator is only ever a task, never a member of `cluster`, Reduction Server
replicas are left out, and only the keys TF reads are written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from typing import Any

from vtrain import ClusterInfo, ConfigError
from vtrain.cluster import CHIEF, EVALUATOR, PS, WORKER

# The roles TensorFlow trains with, in the names TF2 accepts.
TRAINING_ROLES = (CHIEF, WORKER, PS)


def tf_config_for(info: ClusterInfo) -> dict[str, Any] | None:
    """The TF_CONFIG document for this replica of `info`, or None for a single process.

    A role TensorFlow has no task for (a Reduction Server) raises `ConfigError`.
    """
    if not info.is_distributed:
        return None
    if info.role not in (*TRAINING_ROLES, EVALUATOR):
        raise ConfigError(
            f"a {info.role} replica has no TensorFlow task",
            source=info.source,
            value=info.role,
            expected="chief, worker, ps or evaluator",
        )
    cluster: dict[str, list[str] | dict[str, str]] = {}
    for role in TRAINING_ROLES:
        addresses = info.cluster.get(role, ())
        if None in addresses and info.source == "tf_config":
            # Kubeflow's sparse form ({"1": address, …}) came in; TF reads it, so it goes out.
            cluster[role] = {str(i): a for i, a in enumerate(addresses) if a is not None}
        elif None in addresses:
            raise ConfigError(
                f"TensorFlow needs every replica's address, but {info.source} does not give "
                f"the {role} addresses",
                source=info.source,
                path=f"cluster.{role}",
                value=list(addresses),
                hint="run TensorFlow jobs from CLUSTER_SPEC or TF_CONFIG (Vertex, AI Platform, "
                "Kubeflow TFJob, vtrain local run)",
            )
        elif addresses:
            cluster[role] = [a for a in addresses if a is not None]
    return {"cluster": cluster, "task": {"type": info.role, "index": info.index}}


def write_tf_config(info: ClusterInfo, environ: MutableMapping[str, str]) -> dict[str, Any] | None:
    """Set (or, for a single process, remove) TF_CONFIG in `environ`; return what was set."""
    config = tf_config_for(info)
    if config is None:
        environ.pop("TF_CONFIG", None)
    else:
        environ["TF_CONFIG"] = json.dumps(config)
    return config


def uses_parameter_servers(info: ClusterInfo) -> bool:
    """True when the cluster trains with ParameterServerStrategy."""
    return bool(info.cluster.get(PS))


def cluster_spec_dict(config: Mapping[str, Any]) -> dict[str, Any]:
    """The `cluster` part, as tf.train.ClusterSpec takes it (sparse roles keyed by int)."""
    return {
        role: {int(i): a for i, a in tasks.items()} if isinstance(tasks, dict) else list(tasks)
        for role, tasks in config["cluster"].items()
    }
