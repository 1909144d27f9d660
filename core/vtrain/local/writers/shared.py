"""What more than one platform writes: the job's ids, the cluster documents, the trainer ranks."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from vtrain.local.plan import Plan, Replica

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cloud_ml_ids(plan: Plan) -> dict[str, str]:
    """The project, job, region and trial ids Vertex and AI Platform set."""
    env = {
        # Vertex sets the project *number* here; a made-up one keeps readers' checks honest.
        "CLOUD_ML_PROJECT_ID": "123456789012",
        "CLOUD_ML_JOB_ID": plan.job_id,
        "CLOUD_ML_REGION": "local",
    }
    if plan.trial_id:
        env["CLOUD_ML_TRIAL_ID"] = plan.trial_id
    return env


def addresses(replicas: Sequence[Replica], names: Mapping[str, str]) -> dict[str, list[str]]:
    """Role (renamed by `names`; roles missing from it are left out) -> addresses in index order."""
    cluster: dict[str, list[str]] = {}
    for r in replicas:
        if r.role in names:
            cluster.setdefault(names[r.role], []).append(r.address)
    return cluster


def document(cluster: Mapping[str, list[str]], task: Mapping[str, Any], **extra: Any) -> str:
    """A CLUSTER_SPEC or TF_CONFIG document: cluster, task and any extra top-level keys."""
    return json.dumps({"cluster": dict(cluster), "task": dict(task), **extra})


def trainer_variables(replicas: Sequence[Replica], me: Replica) -> dict[str, str]:
    """MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK, counted in replicas (chief 0, worker i+1)."""
    trainers = [r for r in replicas if r.role in ("chief", "worker")]
    chief = trainers[0]
    return {
        "MASTER_ADDR": chief.address.rsplit(":", 1)[0],
        "MASTER_PORT": str(chief.port),
        "WORLD_SIZE": str(len(trainers)),
        "RANK": str(trainers.index(me)),
    }
