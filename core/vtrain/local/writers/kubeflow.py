"""What Kubeflow's training operator sets: a TFJob's TF_CONFIG and a PyTorchJob's variables.

TFJob puts every role, the evaluator included, into TF_CONFIG's cluster and
sets it only when the job has more than one replica. PyTorchJob and
XGBoostJob set MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK (master 0,
worker i -> i+1) on every trainer, also in a job of one. Without a manifest
(`--platform kubeflow` alone) a replica gets both, so any framework runs; a
rehearsed manifest (`--job`) gets exactly what its kind sets.
"""

from __future__ import annotations

from collections.abc import Sequence

from vtrain.local.environment import addresses, document, trainer_variables
from vtrain.local.plan import Plan, Replica

NAMES = {"chief": "chief", "worker": "worker", "ps": "ps", "evaluator": "evaluator"}


def variables(
    plan: Plan, replicas: Sequence[Replica], me: Replica, restarts: int
) -> dict[str, str]:
    """Kubeflow's variables for replica `me`."""
    env: dict[str, str] = {}
    kind = plan.job_kind
    names = NAMES
    if kind == "TFJob" and "Master" in ((plan.job or {}).get("spec") or {}).get(
        "tfReplicaSpecs", {}
    ):
        # A TFJob that asks for a Master gets "master" in TF_CONFIG, as the operator writes it.
        names = {**NAMES, "chief": "master"}
    if len(replicas) > 1 and kind in (None, "TFJob"):
        env["TF_CONFIG"] = document(
            addresses(replicas, names),
            {"type": names[me.role], "index": me.index},
            environment="cloud",
        )
    if me.role in ("chief", "worker") and kind != "TFJob":
        env.update(trainer_variables(replicas, me))
    return env
