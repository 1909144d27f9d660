"""What Kubeflow's training operator sets: a TFJob's TF_CONFIG and a PyTorchJob's variables.

TFJob puts every role, the evaluator included, into TF_CONFIG's cluster and
sets it only when the job has more than one replica. PyTorchJob and
XGBoostJob set MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK (master 0,
worker i -> i+1) on every trainer, also in a job of one. Without a manifest
(`--platform kubeflow` alone) a replica gets both, so any framework runs; a
rehearsed manifest (`--job`) gets exactly what its kind sets (an XGBoostJob
adds WORKER_ADDRS and WORKER_PORT): the kind's word, `Kind.sets` in
`vtrain.submit.kubeflow.kinds`, which the plan carries as `job_sets`. Trainer
v2's TrainJob is `vtrain.local.writers.trainjob`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from vtrain.local.plan import Plan, Replica
from vtrain.local.writers.shared import addresses, document, trainer_variables

NAMES = {"chief": "chief", "worker": "worker", "ps": "ps", "evaluator": "evaluator"}


def variables(
    plan: Plan, replicas: Sequence[Replica], me: Replica, restarts: int
) -> dict[str, str]:
    """Kubeflow's variables for replica `me`."""
    env: dict[str, str] = {}
    kind = plan.job_kind
    # No manifest: TF_CONFIG and the trainers' variables both, so that any framework runs.
    sets = ("TF_CONFIG", "MASTER_ADDR") if plan.job_sets is None else plan.job_sets
    names = NAMES
    if kind == "TFJob" and "Master" in ((plan.job or {}).get("spec") or {}).get(
        "tfReplicaSpecs", {}
    ):
        # A TFJob that asks for a Master gets "master" in TF_CONFIG, as the operator writes it.
        names = {**NAMES, "chief": "master"}
    if len(replicas) > 1 and "TF_CONFIG" in sets:
        env["TF_CONFIG"] = document(
            addresses(replicas, names),
            {"type": names[me.role], "index": me.index},
            environment="cloud",
        )
    if me.role in ("chief", "worker") and "MASTER_ADDR" in sets:
        env.update(trainer_variables(replicas, me))
    if "WORKER_ADDRS" in sets:
        env.update(worker_addresses(replicas))
    return env


def worker_addresses(replicas: Sequence[Replica]) -> dict[str, str]:
    """WORKER_ADDRS and WORKER_PORT, which the operator sets on every pod of a job with workers."""
    workers = [r for r in replicas if r.role == "worker"]
    if not workers:
        return {}
    # On Kubeflow each worker has its own host and they share one port. Here each worker is
    # named by its own loopback address (vtrain.local.addresses; where the replicas share
    # 127.0.0.1, 127.0.1.N: Linux routes all of 127.0.0.0/8 to lo), with worker 0's reserved
    # port: distinct (host, port) pairs a worker can bind, as the operator's are.
    hosts = [w.host for w in workers]
    if len(set(hosts)) < len(hosts):
        hosts = [f"127.0.1.{i + 1}" for i in range(len(workers))]
    return {"WORKER_ADDRS": ",".join(hosts), "WORKER_PORT": str(workers[0].port)}
