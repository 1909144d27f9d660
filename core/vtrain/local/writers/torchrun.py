"""What torchrun sets on each worker process, for one node running every trainer.

The chief is rank 0 and the workers follow; MASTER_PORT is the chief's port.
torchrun restarts all its workers together when one fails, and counts those
restarts in TORCHELASTIC_RESTART_COUNT.
"""

from __future__ import annotations

from collections.abc import Sequence

from vtrain.local.plan import Plan, Replica
from vtrain.local.writers.shared import trainer_variables


def variables(
    plan: Plan, replicas: Sequence[Replica], me: Replica, restarts: int
) -> dict[str, str]:
    """torchrun's variables for replica `me`, after `restarts` restarts of the group."""
    env = trainer_variables(replicas, me)
    size = env["WORLD_SIZE"]
    env.update(
        {
            "LOCAL_RANK": env["RANK"],
            "LOCAL_WORLD_SIZE": size,
            "GROUP_RANK": "0",
            "GROUP_WORLD_SIZE": "1",
            "ROLE_NAME": "default",
            "ROLE_RANK": env["RANK"],
            "ROLE_WORLD_SIZE": size,
            "TORCHELASTIC_RUN_ID": plan.job_id,
            "TORCHELASTIC_RESTART_COUNT": str(restarts),
            "TORCHELASTIC_MAX_RESTARTS": str(plan.max_restarts),
            # No agent hosts a store here: rank 0 hosts it, as with a plain env:// launch.
            "TORCHELASTIC_USE_AGENT_STORE": "False",
        }
    )
    return env
