"""A Vertex CustomJob or tuning job, rehearsed: each pool as that many local replicas."""

from __future__ import annotations

from typing import Any

from vtrain.cluster.roles import EVALUATOR, PS, WORKER
from vtrain.submit.container_env import container_env
from vtrain.submit.document import JobDocument
from vtrain.submit.rehearsal import SPOT_NOTE, Rehearsal, replica_command, trial
from vtrain.submit.vertex.job import POOL_ROLES
from vtrain.tune.study_file import study_from_document


def rehearse(
    job: JobDocument, local: list[str], trial_id: str | None, output_dir: str
) -> Rehearsal:
    """Every pool's replicas with its command, args and env; a tuning job runs one trial."""
    doc = job.document
    tuning = "trialJobSpec" in doc
    spec_field = "trialJobSpec" if tuning else "jobSpec"
    spec = doc[spec_field]
    study = study_from_document(_whole_numbers(doc), source=job.source) if tuning else None
    trial_id, flags, trial_env = trial(study, trial_id)
    counts = dict.fromkeys(POOL_ROLES, 0)
    commands: dict[str, list[str]] = {}
    envs: dict[str, dict[str, str]] = {}
    # Where each count came from: a refusal names the document's field, not a flag.
    sources: dict[str, str] = {}
    notes = []
    for i, (role, pool) in enumerate(zip(POOL_ROLES, spec["workerPoolSpecs"], strict=False)):
        if not pool:
            continue
        where = f"{spec_field}.workerPoolSpecs[{i}]"
        container = pool.get("containerSpec") or {}
        if "reductionserver" in container.get("imageUri", ""):
            # Google's Reduction Server is not the user's program: nothing to rehearse.
            notes.append(
                f"pool 2 is a Reduction Server ({pool['replicaCount']} replicas): "
                "not started locally"
            )
            continue
        counts[role] = int(pool.get("replicaCount", 0))
        sources[role] = f"{job.source}: {where}.replicaCount"
        package = pool.get("pythonPackageSpec")
        if package:
            command, args = ["python", "-m", package["pythonModule"]], package.get("args", [])
            env_list, env_where = package.get("env"), f"{where}.pythonPackageSpec.env"
        else:
            command, args = container.get("command", []), container.get("args", [])
            env_list, env_where = container.get("env"), f"{where}.containerSpec.env"
        commands[role] = replica_command(role, command, args, local, job.source) + flags
        envs[role] = container_env(env_list, source=job.source, path=env_where) | trial_env
    options = dict(
        platform="vertex",
        workers=counts[WORKER],
        ps=counts[PS],
        evaluators=counts[EVALUATOR],
        trial_id=trial_id,
        restart_job=bool((spec.get("scheduling") or {}).get("restartJobOnWorkerRestart")),
        job=spec,
        job_kind=job.kind,
        role_commands=commands,
        role_env=envs,
        sources=sources,
    )
    if (spec.get("scheduling") or {}).get("strategy") == "SPOT":
        notes.append(SPOT_NOTE)
    return Rehearsal(options, notes)


def _whole_numbers(doc: dict[str, Any]) -> dict[str, Any]:
    """The tuning job's StudySpec as the study file wrote it, with the proto's defaults.

    Proto3 JSON leaves out what equals its default: a zero (a range from 0 reads back
    without its minValue) and an empty list (a spec with no parameters has no
    `parameters`). Each is written back here, so the study reader sees what was sent.
    """
    study_spec = dict(doc.get("studySpec") or {})
    study_spec["parameters"] = [_parameter(p) for p in study_spec.get("parameters") or []]
    return {**doc, "studySpec": study_spec}


def _parameter(p: dict[str, Any]) -> dict[str, Any]:
    out = dict(p)
    for spec in ("doubleValueSpec", "integerValueSpec"):
        if spec in out:
            out[spec] = {"minValue": 0, "maxValue": 0, **out[spec]}
    # Vertex's discrete values are doubles: JSON gives 16.0, and `vtrain tune` passes 16.
    for spec in ("discreteValueSpec", "categoricalValueSpec"):
        if spec in out:
            out[spec] = {**out[spec], "values": _whole(out[spec].get("values") or [])}
    if "conditionalParameterSpecs" in out:
        out["conditionalParameterSpecs"] = [_condition(c) for c in out["conditionalParameterSpecs"]]
    return out


def _condition(c: dict[str, Any]) -> dict[str, Any]:
    out = {**c, "parameterSpec": _parameter(c.get("parameterSpec") or {})}
    for parent in ("parentDiscreteValues", "parentIntValues", "parentCategoricalValues"):
        if parent in out:
            out[parent] = {**out[parent], "values": _whole(out[parent].get("values") or [])}
    return out


def _whole(values: list[Any]) -> list[Any]:
    return [int(v) if isinstance(v, float) and v.is_integer() else v for v in values]
