"""What legacy AI Platform Training sets on each replica of a custom-container job.

CLUSTER_SPEC and TF_CONFIG are both set on every replica, with roles named
master, worker, ps and evaluator. TF_CONFIG calls the chief `chief` when the
job asks for it (`useChiefInTfConfig`, `--use-chief`) or has evaluators, as
TensorFlow 2 strategies require; the evaluator stays outside its cluster. The
job's jobDir reaches the program as an argument, `--job-dir` (`Plan.command_of`).
"""

from __future__ import annotations

from collections.abc import Sequence

from vtrain.local.plan import Plan, Replica
from vtrain.local.writers.shared import addresses, cloud_ml_ids, document

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAMES = {"chief": "master", "worker": "worker", "ps": "ps", "evaluator": "evaluator"}


def variables(
    plan: Plan, replicas: Sequence[Replica], me: Replica, restarts: int
) -> dict[str, str]:
    """AI Platform's variables for replica `me`."""
    trial = plan.trial_id or ""
    job = training_input(plan)
    chief = "chief" if plan.use_chief or plan.evaluators else "master"
    tf_names = {"chief": chief, "worker": "worker", "ps": "ps"}
    tf_type = tf_names.get(me.role, me.role)
    return {
        "CLUSTER_SPEC": document(
            addresses(replicas, NAMES),
            {"type": NAMES[me.role], "index": me.index, "trial": trial},
            environment="cloud",
            job=job,
        ),
        "TF_CONFIG": document(
            addresses(replicas, tf_names),
            {"type": tf_type, "index": me.index, "trial": trial},
            environment="cloud",
            job=job,
        ),
        **cloud_ml_ids(plan),
    }


def training_input(plan: Plan) -> dict[str, Any]:
    """The TrainingInput, as CLUSTER_SPEC's `job` carries it (a dict)."""
    if plan.job is not None:
        # A rehearsed config.yaml: the replicas see the very trainingInput that is submitted.
        return dict(plan.job)
    job: dict[str, Any] = {
        "scaleTier": "CUSTOM",
        "masterType": "local",
        "masterConfig": {"imageUri": "local"},
        "args": list(plan.command[1:]),
        "region": "local",
        "jobDir": plan.output_dir,
        "useChiefInTfConfig": plan.use_chief,
    }
    for key, count in (
        ("worker", plan.workers),
        ("parameterServer", plan.ps),
        ("evaluator", plan.evaluators),
    ):
        if count:
            job[f"{key}Type"] = "local"
            job[f"{key}Count"] = str(count)
    return job
