"""AI Platform's config.yaml, rehearsed: master, workers, ps and evaluators as local replicas."""

from __future__ import annotations

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.submit.aiplatform.hyperparameters import study_of
from vtrain.submit.aiplatform.job import PREFIXES
from vtrain.submit.document import JobDocument
from vtrain.submit.rehearsal import Rehearsal, replica_command, trial


def rehearse(
    job: JobDocument, local: list[str], trial_id: str | None, output_dir: str
) -> Rehearsal:
    """Every role's replicas with the master's command (or the role's own) and the job's args."""
    training = dict(job.document["trainingInput"])
    hyper = training.get("hyperparameters")
    study = study_of(hyper, job.source) if hyper else None
    trial_id, flags, trial_env = trial(study, trial_id)
    counts = {CHIEF: 1} | {
        role: int(training.get(f"{prefix}Count") or 0)
        for role, prefix in PREFIXES.items()
        if role != CHIEF
    }
    master = training.get("masterConfig") or {}
    job_dir = []
    if training.get("jobDir"):
        # The service passes jobDir to the program as --job-dir (ml v1's own description);
        # the folder the replicas see is this machine's, as AIP_* dirs are on Vertex.
        training["jobDir"] = output_dir
        job_dir = [f"--job-dir={output_dir}"]
    commands, envs = {}, {}
    for role, prefix in PREFIXES.items():
        if counts[role]:
            config = training.get(f"{prefix}Config") or master
            command = config.get("containerCommand") or master.get("containerCommand", [])
            # A role's own containerArgs, or the job's args (never both: the schema says so).
            args = (
                config.get("containerArgs")
                or master.get("containerArgs")
                or training.get("args", [])
            )
            args = [*args, *job_dir]
            commands[role] = replica_command(role, command, args, local, job.source) + flags
            envs[role] = dict(trial_env)
    options = dict(
        platform="aiplatform",
        workers=counts[WORKER],
        ps=counts[PS],
        evaluators=counts[EVALUATOR],
        use_chief=bool(training.get("useChiefInTfConfig")) or bool(counts[EVALUATOR]),
        trial_id=trial_id,
        job=training,
        job_kind=job.kind,
        role_commands=commands,
        role_env=envs,
        sources={
            role: f"{job.source}: trainingInput.{prefix}Count"
            for role, prefix in PREFIXES.items()
            if role != CHIEF
        },
    )
    return Rehearsal(options, [])
