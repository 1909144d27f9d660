"""A Vertex CustomJob or tuning job, rehearsed: each pool as that many local replicas."""

from __future__ import annotations

from typing import Any

from vtrain.cluster.roles import EVALUATOR, PS, WORKER
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
    spec = doc["trialJobSpec" if tuning else "jobSpec"]
    study = study_from_document(_whole_numbers(doc), source=job.source) if tuning else None
    trial_id, flags, trial_env = trial(study, trial_id)
    counts = dict.fromkeys(POOL_ROLES, 0)
    commands: dict[str, list[str]] = {}
    envs: dict[str, dict[str, str]] = {}
    notes = []
    for role, pool in zip(POOL_ROLES, spec["workerPoolSpecs"], strict=False):
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
        commands[role] = replica_command(role, command, args, local, job.source) + flags
        envs[role] = {e["name"]: e.get("value", "") for e in env_list} | trial_env
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
    )
    if (spec.get("scheduling") or {}).get("strategy") == "SPOT":
        notes.append(SPOT_NOTE)
    return Rehearsal(options, notes)


def _whole_numbers(doc: dict[str, Any]) -> dict[str, Any]:
    """The tuning job's StudySpec as the study file wrote it: whole numbers, zeros written out."""
    study_spec = dict(doc["studySpec"])
    study_spec["parameters"] = [_parameter(p) for p in study_spec["parameters"]]
    return {**doc, "studySpec": study_spec}


def _parameter(p: dict[str, Any]) -> dict[str, Any]:
    out = dict(p)
    for spec in ("doubleValueSpec", "integerValueSpec"):
        if spec in out:
            # Proto3 JSON leaves a zero out: a range from 0 reads back without its minValue.
            out[spec] = {"minValue": 0, "maxValue": 0, **out[spec]}
    # Vertex's discrete values are doubles: JSON gives 16.0, and `vtrain tune` passes 16.
    if "discreteValueSpec" in out:
        out["discreteValueSpec"] = {"values": _whole(out["discreteValueSpec"]["values"])}
    if "conditionalParameterSpecs" in out:
        out["conditionalParameterSpecs"] = [
            {
                **c,
                **(
                    {
                        "parentDiscreteValues": {
                            "values": _whole(c["parentDiscreteValues"]["values"])
                        }
                    }
                    if "parentDiscreteValues" in c
                    else {}
                ),
                "parameterSpec": _parameter(c["parameterSpec"]),
            }
            for c in out["conditionalParameterSpecs"]
        ]
    return out


def _whole(values: list[Any]) -> list[Any]:
    return [int(v) if float(v).is_integer() else v for v in values]
