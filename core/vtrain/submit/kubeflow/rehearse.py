"""A Kubeflow manifest, rehearsed: each replica type as that many local replicas.

A v1 job's replicas run the container the operator would find (by the name
its kind gives it); a TrainJob's numNodes identical nodes run its one trainer;
a Katib Experiment runs one trial: its trial's job, with Katib's placeholders
filled in as Katib would fill them for that trial.
"""

from __future__ import annotations

import json
from typing import Any

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.cluster.trainjob_reader import LAYOUT, layout_counts
from vtrain.context import OUTPUT_FOLDERS, output_dirs
from vtrain.errors import UsageError
from vtrain.local.writers.trainjob import TORCH, runtime_family
from vtrain.submit.container_env import container_env
from vtrain.submit.document import JobDocument
from vtrain.submit.kubeflow import katib, trainjob
from vtrain.submit.kubeflow.gke import SPOT_LABEL
from vtrain.submit.kubeflow.kinds import KINDS
from vtrain.submit.rehearsal import (
    SPOT_NOTE,
    Rehearsal,
    replica_command,
    trial,
    trial_number,
    trial_values,
)

# Set per replica by the rehearsal itself (each replica writes its own metric file here).
_LOCAL_OWNED = ("CLOUD_ML_HP_METRIC_FILE",)


def rehearse(
    job: JobDocument, local: list[str], trial_id: str | None, output_dir: str
) -> Rehearsal:
    """Every replica type's replicas with its container's command, args and env."""
    if job.kind == katib.KIND:
        return _experiment(job, local, trial_id, output_dir)
    trial(None, trial_id)
    if job.kind == trainjob.KIND:
        return _trainjob(job, local, output_dir)
    return _v1(job.document, job.kind, job.source, local, output_dir)


def _experiment(
    job: JobDocument, local: list[str], trial_id: str | None, output_dir: str
) -> Rehearsal:
    """One trial of a Katib Experiment: its trial's job, with that trial's parameters."""
    study = katib.study_of(job.document, job.source)
    number = trial_number(trial_id)
    values = trial_values(study, number)
    # What Katib puts in each ${trialParameters.NAME}: the value's text, as in its flag; the
    # trial's own name (here, its number) where a trial parameter refers to ${trialSpec.Name}.
    texts = {
        p.parameter_id: p.flag(values[p.parameter_id]).split("=", 1)[1] for p in study.parameters
    }
    template = job.document["spec"]["trialTemplate"]
    fills = {
        t["name"]: number if t["reference"] == katib.TRIAL_NAME else texts.get(t["reference"], "")
        for t in template.get("trialParameters") or []
    }
    text = katib.PLACEHOLDER.sub(
        lambda m: json.dumps(fills.get(m[1], m[0]))[1:-1], json.dumps(template["trialSpec"])
    )
    trial_job: dict[str, Any] = json.loads(text)
    source = f"{job.source}: spec.trialTemplate.trialSpec"
    rehearsal = _v1(trial_job, str(trial_job["kind"]), source, local, output_dir)
    shown = " ".join(f"--{k}={v}" for k, v in texts.items())
    rehearsal.notes.append(f"Katib trial {number}: {shown} (as the study's {study.algorithm})")
    return rehearsal


def _v1(
    doc: dict[str, Any], kind_name: str, source: str, local: list[str], output_dir: str
) -> Rehearsal:
    """A training-operator job's replicas."""
    kind = KINDS[kind_name]
    specs = doc["spec"][kind.replica_specs]
    if kind.chief not in specs:
        raise UsageError(
            "the rehearsal needs the job's chief",
            source="--job",
            value=sorted(specs),
            expected=f"a {kind.chief} replica spec",
        )
    counts = dict.fromkeys((CHIEF, WORKER, PS, EVALUATOR), 0)
    commands, envs, sources = {}, {}, {}
    local_dirs = output_dirs(output_dir)
    for replica_type, spec in specs.items():
        role = kind.role_of(replica_type)
        where = f"spec.{kind.replica_specs}.{replica_type}"
        # The operator's default is one replica; `replicas: null` is that default too.
        replicas = spec.get("replicas")
        counts[role] = 1 if replicas is None else int(replicas)
        sources[role] = f"{source}: {where}.replicas"
        # `manifest.check` has refused a pod without containers.
        containers = spec["template"]["spec"]["containers"]
        i, container = next(
            ((i, c) for i, c in enumerate(containers) if c.get("name") == kind.container),
            (0, containers[0]),
        )
        commands[role] = replica_command(
            role, container.get("command") or [], container.get("args") or [], local, source
        )
        env = container_env(
            container.get("env"),
            source=source,
            path=f"{where}.template.spec.containers[{i}].env",
            skip=_LOCAL_OWNED,
        )
        # The manifest's output folders live in the cluster; here they are this job's.
        envs[role] = env | {k: local_dirs[k] for k in OUTPUT_FOLDERS if k in env}
    options = dict(
        platform="kubeflow",
        workers=counts[WORKER],
        ps=counts[PS],
        evaluators=counts[EVALUATOR],
        job=doc,
        job_kind=kind_name,
        job_sets=kind.sets,
        role_commands=commands,
        role_env=envs,
        sources=sources,
    )
    selectors = [s["template"]["spec"].get("nodeSelector") or {} for s in specs.values()]
    spot = any(selector.get(SPOT_LABEL) == "true" for selector in selectors)
    return Rehearsal(options, [SPOT_NOTE] if spot else [])


def _trainjob(job: JobDocument, local: list[str], output_dir: str) -> Rehearsal:
    """numNodes replicas of the one trainer: node 0 is the chief, the others workers, or the
    roles of vtrain's layout (TensorFlow, MXNet), node by node."""
    trainer = job.document["spec"].get("trainer") or {}
    nodes = int(trainer.get("numNodes") or 1)
    command = replica_command(
        CHIEF, trainer.get("command") or [], trainer.get("args") or [], local, job.source
    )
    env = container_env(trainer.get("env"), source=job.source, path="spec.trainer.env")
    env |= {k: v for k, v in output_dirs(output_dir).items() if k in env}
    counts = {CHIEF: 1, WORKER: nodes - 1, PS: 0, EVALUATOR: 0}
    sources = {WORKER: f"{job.source}: spec.trainer.numNodes"}
    if LAYOUT in env:
        # `trainjob.check` has checked that the layout's nodes are numNodes.
        counts = layout_counts(env[LAYOUT])[0]
        sources = {role: f"{job.source}: spec.trainer.env {LAYOUT}" for role in counts}
    notes = []
    name = (job.document["spec"].get("runtimeRef") or {}).get("name")
    family = runtime_family(name, env)
    if family == TORCH and "numProcPerNode" not in trainer:
        notes.append(
            "numProcPerNode is unset: the runtime's default (auto: one process per GPU, "
            "else per CPU) is what torchrun sees in PET_NPROC_PER_NODE"
        )
    if family is None:
        notes.append(
            f"the runtime {name} is not one vtrain knows: each node gets every runtime's "
            "variables that fit (torch-distributed's PET_*, XGBoost's DMLC_*, vtrain's layout); "
            f"what {name} itself sets is not rehearsed"
        )
    options = dict(
        platform="trainjob",
        workers=counts[WORKER],
        ps=counts[PS],
        evaluators=counts[EVALUATOR],
        job=job.document,
        job_kind=job.kind,
        role_commands=dict.fromkeys(counts, command),
        role_env=dict.fromkeys(counts, env),
        sources=sources,
    )
    return Rehearsal(options, notes)
