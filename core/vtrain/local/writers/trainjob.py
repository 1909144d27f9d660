"""What Kubeflow Trainer v2 sets on a TrainJob's node, by the runtime the job names.

Every node gets JOB_COMPLETION_INDEX (its Indexed Job's) and the TrainJob's
status endpoint (`vtrain.local.trainjob_status`, passed in by the job). Then the
runtime's own variables (`vtrain.cluster.trainjob_reader` reads them back):
torch-distributed's PET_*, the XGBoost runtime's DMLC_*, or vtrain's layout for
TensorFlow and MXNet, with VTRAIN_JOBSET as vtrain's runtime sets it. Here the
nodes have no DNS names, so the layout lists each node's loopback address, where
the cluster's nodes derive `<jobset>-node-0-<index>.<jobset>`. Without a
manifest (`--platform trainjob` alone), a node gets every runtime's variables that
fit the topology, so that any framework runs; the layout, read first, describes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from vtrain.cluster.trainjob_reader import INDEX, JOBSET, LAYOUT, LAYOUT_ROLES
from vtrain.local.plan import Plan, Replica

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TORCH, XGBOOST, VTRAIN = "torch", "xgboost", "vtrain"
# The runtimes the Trainer ships (manifests/base/runtimes), by what they set on a node.
_SHIPPED = {
    "torch-distributed": TORCH,
    "deepspeed-distributed": TORCH,
    "xgboost-distributed": XGBOOST,
}


def runtime_family(name: str | None, env: Mapping[str, str]) -> str | None:
    """What a runtime named `name` sets: torch's, XGBoost's or vtrain's variables; None: not
    known here (no manifest, or a runtime of the cluster's own), so every one that fits.

    A TrainJob that carries vtrain's layout (`env`, its trainer's env) runs on vtrain's
    runtime whatever its name; the Trainer's own runtimes are known by name.
    """
    if LAYOUT in env:
        return VTRAIN
    return _SHIPPED.get(name or "")


def variables(
    plan: Plan, replicas: Sequence[Replica], me: Replica, restarts: int
) -> dict[str, str]:
    """The runtime's variables for node `me` (nodes in rank order: chief first)."""
    index = replicas.index(me)
    env = {INDEX: str(index)}
    trainer = _trainer(plan.job)
    ref = ((plan.job or {}).get("spec") or {}).get("runtimeRef") or {}
    family = runtime_family(ref.get("name"), (plan.role_env or {}).get("chief", {}))
    if family in (VTRAIN, None):
        env.update(layout_variables(plan, replicas))
    trainers = [r for r in replicas if r.role in ("chief", "worker")]
    if family in (TORCH, None) and len(trainers) == len(replicas):
        chief = replicas[0]
        env.update(
            {
                "PET_NNODES": str(len(replicas)),
                # The torch runtime's default is "auto"; torchrun resolves it inside the node.
                "PET_NPROC_PER_NODE": str(trainer.get("numProcPerNode", "auto")),
                "PET_NODE_RANK": str(index),
                "PET_MASTER_ADDR": chief.host,
                "PET_MASTER_PORT": str(chief.port),
            }
        )
    if family in (XGBOOST, None) and len(trainers) == len(replicas):
        chief = replicas[0]
        env.update(
            {
                "DMLC_TRACKER_URI": chief.host,
                "DMLC_TRACKER_PORT": str(chief.port),
                "DMLC_TASK_ID": str(index),
                "DMLC_NUM_WORKER": str(len(replicas)),
            }
        )
    return env


def layout_variables(plan: Plan, replicas: Sequence[Replica]) -> dict[str, str]:
    """vtrain's layout (role counts, with each node's address) and the JobSet's name."""
    counts = {role: n for role, n in plan.counts.items() if n and role in LAYOUT_ROLES}
    layout: dict[str, Any] = {
        **counts,
        "port": replicas[0].port,
        "addresses": [r.address for r in replicas],
    }
    return {LAYOUT: json.dumps(layout, separators=(",", ":")), JOBSET: plan.job_id}


def _trainer(job: Any) -> Mapping[str, Any]:
    spec = (job or {}).get("spec") if isinstance(job, Mapping) else None
    trainer = (spec or {}).get("trainer") if isinstance(spec, Mapping) else None
    return trainer if isinstance(trainer, Mapping) else {}
