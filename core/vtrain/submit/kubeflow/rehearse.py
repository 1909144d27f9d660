"""A Kubeflow manifest, rehearsed: each replica type as that many local replicas.

A v1 job's replicas run the container the operator would find (by the name
its kind gives it); a TrainJob's numNodes identical nodes run its one trainer.
"""

from __future__ import annotations

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.context import OUTPUT_FOLDERS, output_dirs
from vtrain.errors import UsageError
from vtrain.submit.document import JobDocument
from vtrain.submit.kubeflow import trainjob
from vtrain.submit.kubeflow.kinds import KINDS
from vtrain.submit.rehearsal import Rehearsal, replica_command, trial


def rehearse(
    job: JobDocument, local: list[str], trial_id: str | None, output_dir: str
) -> Rehearsal:
    """Every replica type's replicas with its container's command, args and env."""
    trial(None, trial_id)
    if job.kind == trainjob.KIND:
        return _trainjob(job, local, output_dir)
    doc = job.document
    kind = KINDS[job.kind]
    specs = doc["spec"][kind.replica_specs]
    if kind.chief not in specs:
        raise UsageError(
            "the rehearsal needs the job's chief",
            source="--job",
            value=sorted(specs),
            expected=f"a {kind.chief} replica spec",
        )
    counts = dict.fromkeys((CHIEF, WORKER, PS, EVALUATOR), 0)
    commands, envs = {}, {}
    local_dirs = output_dirs(output_dir)
    for replica_type, spec in specs.items():
        role = kind.role_of(replica_type)
        counts[role] = int(spec.get("replicas", 1))
        containers = spec["template"]["spec"]["containers"]
        container = next((c for c in containers if c.get("name") == kind.container), containers[0])
        commands[role] = replica_command(
            role, container.get("command") or [], container.get("args") or [], local, job.source
        )
        env = {e["name"]: e.get("value", "") for e in container.get("env") or [] if "name" in e}
        # The manifest's output folders live in the cluster; here they are this job's.
        envs[role] = env | {k: local_dirs[k] for k in OUTPUT_FOLDERS if k in env}
    options = dict(
        platform="kubeflow",
        workers=counts[WORKER],
        ps=counts[PS],
        evaluators=counts[EVALUATOR],
        job=doc,
        job_kind=job.kind,
        role_commands=commands,
        role_env=envs,
    )
    return Rehearsal(options, [])


def _trainjob(job: JobDocument, local: list[str], output_dir: str) -> Rehearsal:
    """numNodes replicas of the one trainer: node 0 is the chief, the others workers."""
    trainer = job.document["spec"].get("trainer") or {}
    nodes = int(trainer.get("numNodes") or 1)
    command = replica_command(
        CHIEF, trainer.get("command") or [], trainer.get("args") or [], local, job.source
    )
    env = {e["name"]: e.get("value", "") for e in trainer.get("env") or [] if "name" in e}
    env |= {k: v for k, v in output_dirs(output_dir).items() if k in env}
    notes = []
    if "numProcPerNode" not in trainer:
        notes.append(
            "numProcPerNode is unset: the runtime's default (auto: one process per GPU, "
            "else per CPU) is what torchrun sees in PET_NPROC_PER_NODE"
        )
    options = dict(
        platform="kubeflow",
        workers=nodes - 1,
        job=job.document,
        job_kind=job.kind,
        role_commands={CHIEF: command, WORKER: command},
        role_env={CHIEF: env, WORKER: env},
    )
    return Rehearsal(options, notes)
