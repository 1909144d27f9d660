"""`vtrain local`: a faithful rehearsal of a multi-replica job on this machine.

`Plan.from_options` checks the arguments, `run_job` starts one process per
replica with the environment its platform would give it, restarts and kills
replicas as the platform would, and stops every process it started.
"""

from vtrain.local.environment import replica_env
from vtrain.local.job import run_job
from vtrain.local.plan import PLATFORMS, Kill, Plan, Replica
from vtrain.local.ports import reserve_ports
from vtrain.local.result import JobResult, ReplicaResult

__all__ = [
    "PLATFORMS",
    "JobResult",
    "Kill",
    "Plan",
    "Replica",
    "ReplicaResult",
    "replica_env",
    "reserve_ports",
    "run_job",
]
