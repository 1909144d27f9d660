"""The environment of one local replica: the parent's, cleaned, plus what its platform sets.

The per-platform writers live in `vtrain.local.writers`, one module each
(`vertex`, `aiplatform`, `kubeflow`, `torchrun`), listed in `WRITERS`; this
module strips from the inherited environment what a platform or vtrain would
set, and adds what every local replica needs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from vtrain.context import output_dirs
from vtrain.local.plan import Plan, Replica
from vtrain.local.writers import aiplatform, kubeflow, torchrun, trainjob, vertex
from vtrain.progress.bound import FIRST_STEP, FLOOR, LOCAL
from vtrain.variables import FRAMEWORK_VARIABLES, PLACEMENT_VARIABLES, RESUME_FROM

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
        # A TrainJob's node: its index, and the XGBoost runtime's and vtrain's layout.
        "JOB_COMPLETION_INDEX",
        "DMLC_TRACKER_URI",
        "DMLC_TRACKER_PORT",
        "DMLC_TASK_ID",
        "DMLC_NUM_WORKER",
        "VTRAIN_TRAINJOB_LAYOUT",
        "VTRAIN_JOBSET",
        # vtrain's local base folder: each job sets its own.
        "VTRAIN_OUTPUT_DIR",
        # A parent's "single" would make every replica believe it is the chief.
        "VTRAIN_CLUSTER_SOURCE",
        # The rehearsal's probe (vtrain.local.probe): each run's own record, never a parent's.
        "VTRAIN_LOCAL_RECORD",
        "VTRAIN_LOCAL_WATCH",
        # The job a parent job continued: a new job continues one only by its own --resume-from.
        RESUME_FROM,
    }
    # What vtrain writes itself: a parent's VTRAIN_LOCAL_LAUNCH would turn a Kubeflow
    # replica into a torchrun process, a parent's VTRAIN_LEADER name another job's leader.
    | PLACEMENT_VARIABLES
)
# KUBEFLOW_TRAINER_*: a TrainJob's status endpoint: a `--platform trainjob` rehearsal serves
# its own, and passes it on (`replica_env`); no other replica posts to a TrainJob.
STATUS_PREFIX = "KUBEFLOW_TRAINER_"
PLATFORM_PREFIXES = ("AIP_", "CLOUD_ML_", "TORCHELASTIC_", "PET_", STATUS_PREFIX)
# Chosen by whoever starts the job (the study's metric tag), not by the job's position:
# `vtrain tune` sets it for a distributed trial, and every replica must see it.
# The dataset variables name the job's input, the same on every replica (vtrain.data).
DATA_VARIABLES = frozenset(
    {"AIP_TRAINING_DATA_URI", "AIP_VALIDATION_DATA_URI", "AIP_TEST_DATA_URI", "AIP_DATA_FORMAT"}
)
PASSED_THROUGH = frozenset({"CLOUD_ML_HP_METRIC_TAG"}) | DATA_VARIABLES

Writer = Callable[[Plan, Sequence[Replica], Replica, int], dict[str, str]]

# One per `vtrain.local.plan.PLATFORMS`, in its order.
WRITERS: Mapping[str, Writer] = MappingProxyType(
    {
        "vertex": vertex.variables,
        "aiplatform": aiplatform.variables,
        "kubeflow": kubeflow.variables,
        "trainjob": trainjob.variables,
        "torchrun": torchrun.variables,
    }
)


def inherited(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without any variable a platform, a launcher or vtrain would set."""
    # A framework's own variables are the ones its plugin listed when it configured this
    # process (`Plugin.environment_prefixes`): reading the plugins' declarations here would
    # load them, and `typing`, before the first replica starts (tests/core/test_import_is_light).
    framework = frozenset(environ.get(FRAMEWORK_VARIABLES, "").split(","))
    return {
        k: v
        for k, v in environ.items()
        if k in PASSED_THROUGH
        or (
            k not in PLATFORM_VARIABLES
            and k not in framework
            and not k.startswith(PLATFORM_PREFIXES)
        )
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
    parent = os.environ if environ is None else environ
    env = inherited(parent)
    # Python buffers a piped stdout until exit; a rehearsal must show lines as they come.
    env.setdefault("PYTHONUNBUFFERED", "1")
    # vtrain's own local default base: the AIP_* dirs (Vertex) win over it; elsewhere it
    # puts the model, checkpoints and logs under the job's output folder.
    env["VTRAIN_OUTPUT_DIR"] = plan.output_dir
    # Each VM has its own /tmp/hypertune; here replicas share a disk, and concurrent runs too.
    env["CLOUD_ML_HP_METRIC_FILE"] = metric_file(plan, me)
    # The watchdog's bound fits a rehearsal, unless the user set it (vtrain.progress.bound).
    env.setdefault(FLOOR, f"{LOCAL.floor:g}")
    env.setdefault(FIRST_STEP, f"{LOCAL.first_step:g}")
    # A rehearsed job's own variables (its container env); the platform's win over them.
    if plan.role_env:
        env.update(plan.role_env.get(me.role, {}))
    env.update(WRITERS[plan.platform](plan, replicas, me, restarts))
    if plan.platform == "trainjob":
        # The status endpoint the rehearsal serves (`vtrain.local.trainjob_status`), as the
        # Trainer's controller sets it on every node.
        env.update({k: v for k, v in parent.items() if k.startswith(STATUS_PREFIX)})
    if plan.output_uri and "AIP_MODEL_DIR" in env:
        # A gs:// output stays gs:// (`vtrain.local.bucket` serves it): what Vertex sets.
        env.update(output_dirs(plan.output_uri, plan.trial_id))
    return env


def metric_file(plan: Plan, replica: Replica) -> str:
    """Where `replica` writes its tuning metric: ``<output>/[<trial>/]hypertune/<name>.metrics``."""
    return os.path.join(plan.trial_dir, "hypertune", f"{replica.name}.metrics")
