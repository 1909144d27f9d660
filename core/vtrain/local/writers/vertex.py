"""What Vertex AI custom training sets on each replica, written for a local replica.

CLUSTER_SPEC names pools by position (workerpool0 = chief, 1 = workers, 2 = ps,
3 = evaluators) and is set on every replica; TF_CONFIG is set only when the job
is distributed, holds chief, worker and ps, and leaves the evaluator outside
its cluster; MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK count machines.
"""

from __future__ import annotations

from collections.abc import Sequence

from vtrain.cluster.roles import VERTEX_POOLS
from vtrain.context import output_dirs
from vtrain.local.plan import Plan, Replica
from vtrain.local.writers.shared import addresses, cloud_ml_ids, document, trainer_variables

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

POOLS = {role: pool for pool, role in VERTEX_POOLS.items()}
TF_ROLES = {"chief": "chief", "worker": "worker", "ps": "ps"}


def variables(
    plan: Plan, replicas: Sequence[Replica], me: Replica, restarts: int
) -> dict[str, str]:
    """Vertex's variables for replica `me`."""
    trial = plan.trial_id or ""
    job = job_spec(plan)
    env = {
        "CLUSTER_SPEC": document(
            addresses(replicas, POOLS),
            {"type": POOLS[me.role], "index": me.index, "trial": trial},
            environment="cloud",
            job=job,
        ),
        **output_dirs(plan.output_dir, plan.trial_id),
        **cloud_ml_ids(plan),
    }
    if len(replicas) > 1:
        env["TF_CONFIG"] = document(
            addresses(replicas, TF_ROLES),
            {"type": me.role, "index": me.index, "trial": trial, "cloud": f"{plan.job_id}-local"},
            environment="cloud",
            job=job,
        )
        if me.role in ("chief", "worker"):
            env.update(trainer_variables(replicas, me))
    return env


def job_spec(plan: Plan) -> dict[str, Any]:
    """The CustomJobSpec, as CLUSTER_SPEC's `job` carries it (a dict)."""
    if plan.job is not None:
        # A rehearsed job: the replicas see the very spec that is submitted.
        return dict(plan.job)
    counts = list(plan.counts.values())
    while counts and counts[-1] == 0:
        counts.pop()
    # A skipped pool stays in the list as an empty spec: the position is what names a pool.
    pools: list[dict[str, Any]] = [
        {
            "machineSpec": {"machineType": "local"},
            "replicaCount": str(n),
            "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100},
            "containerSpec": {"imageUri": "local", "command": list(plan.command)},
        }
        if n
        else {}
        for n in counts
    ]
    return {
        "workerPoolSpecs": pools,
        "baseOutputDirectory": {"outputUriPrefix": plan.output_dir},
    }
