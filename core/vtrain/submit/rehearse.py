"""A job document as a local rehearsal: the `Plan.from_options` arguments that reproduce it.

Each pool becomes that many local replicas, running the pool's command (or
the local COMMAND in place of the image's entrypoint) with the pool's args and
env; a tuning job runs one trial, with that trial's flags, id and folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vtrain.cluster.fields import natural
from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.context import OUTPUT_FOLDERS, output_dirs
from vtrain.errors import UsageError
from vtrain.submit.job_file import JobDocument
from vtrain.tune.study import Study
from vtrain.tune.study_file import study_from_document

VERTEX_ROLES = (CHIEF, WORKER, PS, EVALUATOR)
KUBEFLOW_ROLES = {
    "Chief": CHIEF,
    "Master": CHIEF,
    "Worker": WORKER,
    "PS": PS,
    "Evaluator": EVALUATOR,
}
AIPLATFORM_ROLES = {
    CHIEF: "master",
    WORKER: "worker",
    PS: "parameterServer",
    EVALUATOR: "evaluator",
}
_AIP_SCALES = {"NONE": "LINEAR"}


class Rehearsal:
    """What `vtrain local run --job` runs: the plan's options, and notes for the user."""

    def __init__(self, options: dict[str, Any], notes: list[str]) -> None:
        self.options = options
        self.notes = notes


def rehearsal(
    job: JobDocument, local_command: Sequence[str], trial: str | None, output_dir: str
) -> Rehearsal:
    """The rehearsal of `job`; `local_command` replaces the image's entrypoint when given."""
    build = {"vertex": _vertex, "aiplatform": _aiplatform, "kubeflow": _kubeflow}[job.platform]
    return build(job, list(local_command), trial, output_dir)


def _command(
    role: str, command: Sequence[str], args: Sequence[str], local: Sequence[str], source: str
) -> list[str]:
    if local:
        # The image's entrypoint (or the pool's command) is what runs the script there;
        # here the local command stands in for it, and the job's args follow as they would.
        return [*local, *args]
    if not command:
        raise UsageError(
            f"the {role} pool runs its image's ENTRYPOINT, which is not on this machine",
            source="COMMAND",
            value=source,
            expected="the local command after --, e.g. -- python train.py",
        )
    return [*command, *args]


def trial_flags(study: Study, trial: str) -> list[str]:
    """The flags the tuning service appends for `trial`: a grid point, or a seeded draw."""
    from vtrain.tune.samplers import GridSampler, RandomSampler

    number = int(trial)
    # A rehearsal must not need optuna: the model-based search's first draws are random too.
    sampler = GridSampler(study) if study.algorithm == "GRID_SEARCH" else RandomSampler(study, 0)
    values = sampler.suggest(number)
    if values is None:
        raise UsageError(
            "beyond the study's grid",
            source="--trial",
            value=trial,
            expected=f"1 to {GridSampler(study).size}",
        )
    by_id = {p.parameter_id: p for p in study.parameters}
    return [by_id[k].flag(v) for k, v in values.items()]


def _trial(study: Study | None, trial: str | None) -> tuple[str | None, list[str], dict[str, str]]:
    if study is None:
        if trial is not None:
            raise UsageError(
                "the job is not a tuning job",
                source="--trial",
                value=trial,
                expected="no --trial, or a HyperparameterTuningJob / "
                "config.yaml with hyperparameters",
            )
        return None, [], {}
    trial = trial or "1"
    number = natural(trial)
    if number is None or number < 1:
        raise UsageError("not a trial number", source="--trial", value=trial, expected="1, 2, ...")
    return trial, trial_flags(study, trial), {"CLOUD_ML_HP_METRIC_TAG": study.metric.metric_id}


def _whole_numbers(doc: dict[str, Any]) -> dict[str, Any]:
    """The tuning job with discrete values 16.0 read back as 16, as the study file wrote them."""
    # Vertex's discrete values are doubles: JSON gives 16.0, and `vtrain tune` passes 16.
    study_spec = dict(doc["studySpec"])
    study_spec["parameters"] = [
        {
            **p,
            "discreteValueSpec": {
                "values": [
                    int(v) if float(v).is_integer() else v for v in p["discreteValueSpec"]["values"]
                ]
            },
        }
        if "discreteValueSpec" in p
        else p
        for p in study_spec["parameters"]
    ]
    return {**doc, "studySpec": study_spec}


def _vertex(job: JobDocument, local: list[str], trial: str | None, output_dir: str) -> Rehearsal:
    doc = job.document
    tuning = "trialJobSpec" in doc
    spec = doc["trialJobSpec" if tuning else "jobSpec"]
    study = study_from_document(_whole_numbers(doc), source=job.source) if tuning else None
    trial, flags, trial_env = _trial(study, trial)
    counts = dict.fromkeys(VERTEX_ROLES, 0)
    commands: dict[str, list[str]] = {}
    envs: dict[str, dict[str, str]] = {}
    notes = []
    for role, pool in zip(VERTEX_ROLES, spec["workerPoolSpecs"], strict=False):
        if not pool:
            continue
        container = pool.get("containerSpec") or {}
        if "reductionserver" in container.get("imageUri", ""):
            # Google's Reduction Server is not the user's program: nothing to rehearse.
            notes.append(
                f"pool 2 is a Reduction Server ({pool['replicaCount']} replicas): "
                "not started locally"
            )
            continue
        counts[role] = int(pool.get("replicaCount", 0))
        package = pool.get("pythonPackageSpec")
        if package:
            command, args = ["python", "-m", package["pythonModule"]], package.get("args", [])
            env_list = package.get("env", [])
        else:
            command, args = container.get("command", []), container.get("args", [])
            env_list = container.get("env", [])
        commands[role] = _command(role, command, args, local, job.source) + flags
        envs[role] = {e["name"]: e.get("value", "") for e in env_list} | trial_env
    options = dict(
        platform="vertex",
        workers=counts[WORKER],
        ps=counts[PS],
        evaluators=counts[EVALUATOR],
        trial_id=trial,
        restart_job=bool((spec.get("scheduling") or {}).get("restartJobOnWorkerRestart")),
        job=spec,
        job_kind=job.kind,
        role_commands=commands,
        role_env=envs,
    )
    return Rehearsal(options, notes)


def aiplatform_study(hyperparameters: dict[str, Any], source: str) -> Study:
    """trainingInput.hyperparameters as a Study (the shape `vtrain tune` reads)."""
    params = []
    for p in hyperparameters.get("params", []):
        kind = p.get("type")
        spec_name = {
            "DOUBLE": "double_value_spec",
            "INTEGER": "integer_value_spec",
            "DISCRETE": "discrete_value_spec",
            "CATEGORICAL": "categorical_value_spec",
        }.get(kind, "double_value_spec")
        if kind in ("DOUBLE", "INTEGER"):
            value: dict[str, Any] = {"min_value": p.get("minValue"), "max_value": p.get("maxValue")}
        else:
            value = {"values": p.get("discreteValues") or p.get("categoricalValues")}
        param: dict[str, Any] = {"parameter_id": p.get("parameterName"), spec_name: value}
        if p.get("scaleType"):
            param["scale_type"] = _AIP_SCALES.get(p["scaleType"], p["scaleType"])
        params.append(param)
    return study_from_document(
        {
            "metrics": [
                {
                    "metric_id": hyperparameters.get("hyperparameterMetricTag"),
                    "goal": hyperparameters.get("goal"),
                }
            ],
            "parameters": params,
            "algorithm": hyperparameters.get("algorithm", "ALGORITHM_UNSPECIFIED"),
            "max_trial_count": hyperparameters.get("maxTrials"),
            "parallel_trial_count": hyperparameters.get("maxParallelTrials", 1),
        },
        source=f"{source}: trainingInput.hyperparameters",
    )


def _aiplatform(
    job: JobDocument, local: list[str], trial: str | None, output_dir: str
) -> Rehearsal:
    training = dict(job.document["trainingInput"])
    hyper = training.get("hyperparameters")
    study = aiplatform_study(hyper, job.source) if hyper else None
    trial, flags, trial_env = _trial(study, trial)
    counts = {CHIEF: 1} | {
        role: int(training.get(f"{prefix}Count") or 0)
        for role, prefix in AIPLATFORM_ROLES.items()
        if role != CHIEF
    }
    master = training.get("masterConfig") or {}
    args = list(training.get("args", []))
    if training.get("jobDir"):
        # The service passes jobDir to the program as --job-dir (ml v1's own description);
        # the folder the replicas see is this machine's, as AIP_* dirs are on Vertex.
        training["jobDir"] = output_dir
        args.append(f"--job-dir={output_dir}")
    commands, envs = {}, {}
    for role, prefix in AIPLATFORM_ROLES.items():
        if counts[role]:
            config = training.get(f"{prefix}Config") or master
            command = config.get("containerCommand") or master.get("containerCommand", [])
            commands[role] = _command(role, command, args, local, job.source) + flags
            envs[role] = dict(trial_env)
    options = dict(
        platform="aiplatform",
        workers=counts[WORKER],
        ps=counts[PS],
        evaluators=counts[EVALUATOR],
        use_chief=bool(training.get("useChiefInTfConfig")) or bool(counts[EVALUATOR]),
        trial_id=trial,
        job=training,
        job_kind=job.kind,
        role_commands=commands,
        role_env=envs,
    )
    return Rehearsal(options, [])


def _kubeflow(job: JobDocument, local: list[str], trial: str | None, output_dir: str) -> Rehearsal:
    from vtrain.submit.kubeflow import KINDS, SPEC_FIELDS

    _trial(None, trial)
    if job.kind == "TrainJob":
        return _trainjob(job, local, output_dir)
    doc = job.document
    specs = doc["spec"][SPEC_FIELDS[job.kind]]
    if not any(t in specs for t in ("Chief", "Master")):
        raise UsageError(
            "the rehearsal needs the job's chief",
            source="--job",
            value=sorted(specs),
            expected="a Chief or Master replica spec",
        )
    container_name = next(c for k, _, c, _ in KINDS.values() if k == job.kind)
    counts = dict.fromkeys(VERTEX_ROLES, 0)
    commands, envs = {}, {}
    local_dirs = output_dirs(output_dir)
    for replica_type, spec in specs.items():
        role = KUBEFLOW_ROLES[replica_type]
        counts[role] = int(spec.get("replicas", 1))
        containers = spec["template"]["spec"]["containers"]
        container = next((c for c in containers if c.get("name") == container_name), containers[0])
        commands[role] = _command(
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
    command = _command(
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
