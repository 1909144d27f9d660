"""What Kubeflow's training operator sets: a TFJob's TF_CONFIG and a PyTorchJob's variables.

TFJob puts every role, the evaluator included, into TF_CONFIG's cluster and
sets it only when the job has more than one replica. PyTorchJob sets
MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK (master 0, worker i -> i+1) on
every trainer, also in a job of one.
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
    if len(replicas) > 1:
        env["TF_CONFIG"] = document(
            addresses(replicas, NAMES),
            {"type": NAMES[me.role], "index": me.index},
            environment="cloud",
        )
    if me.role in ("chief", "worker"):
        env.update(trainer_variables(replicas, me))
    return env
