"""The environment of one local replica: the parent's, cleaned, plus what its platform sets.

The per-platform writers live in `vtrain.local.writers`, one module each
(`vertex`, `aiplatform`, `kubeflow`, `torchrun`); this module strips from the
inherited environment what a platform or vtrain would set, adds what every
local replica needs, and builds the JSON documents (CLUSTER_SPEC, TF_CONFIG)
the writers share.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence

from vtrain.local.plan import Plan, Replica
from vtrain.variables import PLACEMENT_VARIABLES

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Everything a platform, a launcher or vtrain sets on a replica. A parent shell that ran
# inside a job (or a test that exported TF_CONFIG) must not leak its values into the replicas.
PLATFORM_VARIABLES = frozenset(
    {
        "CLUSTER_SPEC",
        "TF_CONFIG",
        "MASTER_ADDR",
        "MASTER_PORT",
        "WORLD_SIZE",
        "RANK",
        "LOCAL_RANK",
        "LOCAL_WORLD_SIZE",
        "GROUP_RANK",
        "GROUP_WORLD_SIZE",
        "ROLE_RANK",
        "ROLE_NAME",
        "ROLE_WORLD_SIZE",
        "WORKER_ADDRS",
        "WORKER_PORT",
        # vtrain's local base folder: each job sets its own.
        "VTRAIN_OUTPUT_DIR",
        # A parent's "single" would make every replica believe it is the chief.
        "VTRAIN_CLUSTER_SOURCE",
    }
    # What vtrain writes itself: a parent's VTRAIN_LOCAL_LAUNCH would turn a Kubeflow
    # replica into a torchrun process, a parent's VTRAIN_LEADER name another job's leader.
    | PLACEMENT_VARIABLES
)
PLATFORM_PREFIXES = ("AIP_", "CLOUD_ML_", "TORCHELASTIC_", "PET_", "DMLC_")
# Chosen by whoever starts the job (the study's metric tag), not by the job's position:
# `vtrain tune` sets it for a distributed trial, and every replica must see it.
# DMLC_INTERFACE names this machine's network interface for MXNet: the user's, not the job's.
# The dataset variables name the job's input, the same on every replica (vtrain.data).
DATA_VARIABLES = frozenset(
    {"AIP_TRAINING_DATA_URI", "AIP_VALIDATION_DATA_URI", "AIP_TEST_DATA_URI", "AIP_DATA_FORMAT"}
)
PASSED_THROUGH = frozenset({"CLOUD_ML_HP_METRIC_TAG", "DMLC_INTERFACE"}) | DATA_VARIABLES

Writer = Callable[[Plan, Sequence[Replica], Replica, int], dict[str, str]]


def inherited(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without any variable a platform, a launcher or vtrain would set."""
    return {
        k: v
        for k, v in environ.items()
        if k in PASSED_THROUGH
        or (k not in PLATFORM_VARIABLES and not k.startswith(PLATFORM_PREFIXES))
    }


def replica_env(
    plan: Plan,
    replicas: Sequence[Replica],
    me: Replica,
    *,
    restarts: int = 0,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment of replica `me` on `plan.platform` (after `restarts` restarts)."""
    env = inherited(os.environ if environ is None else environ)
    # Python buffers a piped stdout until exit; a rehearsal must show lines as they come.
    env.setdefault("PYTHONUNBUFFERED", "1")
    # vtrain's own local default base: the AIP_* dirs (Vertex) win over it; elsewhere it
    # puts the model, checkpoints and logs under the job's output folder.
    env["VTRAIN_OUTPUT_DIR"] = plan.output_dir
    # Each VM has its own /tmp/hypertune; here replicas share a disk, and concurrent runs too.
    env["CLOUD_ML_HP_METRIC_FILE"] = metric_file(plan, me)
    # A rehearsed job's own variables (its container env); the platform's win over them.
    if plan.role_env:
        env.update(plan.role_env.get(me.role, {}))
    env.update(_writer(plan.platform)(plan, replicas, me, restarts))
    return env


def metric_file(plan: Plan, replica: Replica) -> str:
    """Where `replica` writes its tuning metric: ``<output>/[<trial>/]hypertune/<name>.metrics``."""
    return os.path.join(plan.trial_dir, "hypertune", f"{replica.name}.metrics")


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


def _writer(platform: str) -> Writer:
    # Imported here, and only the one asked for: each writer module imports this one for
    # the shared helpers, and a job runs on one platform.
    import importlib

    writer: Writer = importlib.import_module(f"vtrain.local.writers.{platform}").variables
    return writer
