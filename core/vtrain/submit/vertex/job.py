"""A Vertex AI CustomJob or HyperparameterTuningJob document, checked with the SDK's own types.

The document is Vertex's REST JSON (camelCase). `parse` reads it into the
SDK's `aiplatform_v1` message, which refuses unknown fields and enum values,
then checks Vertex's rules for worker pools, which the types alone do not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.errors import ConfigError, Problems
from vtrain.submit import sdk
from vtrain.submit.document import JobDocument
from vtrain.submit.vertex import machines

CUSTOM_JOB = "CustomJob"
TUNING_JOB = "HyperparameterTuningJob"
# Pool positions are fixed: 0 the primary replica, 1 workers, 2 ps or Reduction Server,
# 3 evaluators.
POOL_ROLES = (CHIEF, WORKER, PS, EVALUATOR)
MAX_POOLS = len(POOL_ROLES)
SHAPE = "jobSpec (CustomJob), trialJobSpec (HyperparameterTuningJob)"
# Vertex's EnvVar.name: "Must be a valid C identifier".
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse(kind: str, document: Any, *, source: str) -> Any:
    """The SDK message of `document`; unknown fields, bad enums and bad pools are refused."""
    types = sdk.vertex_types()
    message_class = types.CustomJob if kind == CUSTOM_JOB else types.HyperparameterTuningJob
    parse_error = sdk.json_format().ParseError
    try:
        message = message_class.from_json(json.dumps(document), ignore_unknown_fields=False)
    except (parse_error, ValueError, TypeError, OverflowError) as e:
        raise ConfigError(
            f"not a valid {kind}: {str(e).splitlines()[0]}",
            source=source,
            hint="the SDK's aiplatform_v1 types refused it",
        ) from None
    spec_field = "job_spec" if kind == CUSTOM_JOB else "trial_job_spec"
    check_pools(getattr(message, spec_field), kind, source)
    return message


def check_pools(spec: Any, kind: str, source: str) -> None:
    """Vertex's rules for worker pools, which the message types alone do not enforce."""
    where = ("jobSpec" if kind == CUSTOM_JOB else "trialJobSpec") + ".workerPoolSpecs"
    problems = Problems(source, kind=ConfigError)
    bad = problems.bad
    pools = list(spec.worker_pool_specs)
    if not pools:
        bad(where, "no worker pools", [], "at least the primary pool (workerPoolSpecs[0])")
    if len(pools) > MAX_POOLS:
        bad(
            where,
            "too many worker pools",
            len(pools),
            "at most 4: primary, workers, ps, evaluators",
        )
    if pools and pools[0].replica_count != 1:
        bad(
            f"{where}[0].replicaCount",
            "the primary pool (the chief) runs exactly one replica",
            pools[0].replica_count,
            "1; put the other replicas in workerPoolSpecs[1]",
        )
    counts = [p.replica_count for p in pools]
    serves = (
        len(pools) > 2 and counts[2] and "reductionserver" not in pools[2].container_spec.image_uri
    )
    if serves and not (len(pools) > 1 and counts[1]):
        bad(
            f"{where}[2].replicaCount",
            "parameter servers serve workers, and the job has none",
            counts[2],
            f"{where}[1] with 1 or more workers",
        )
    for i, pool in enumerate(pools):
        machine = pool.machine_spec
        if machine.accelerator_count and not machine.accelerator_type:
            bad(
                f"{where}[{i}].machineSpec.acceleratorCount",
                "an accelerator count with no accelerator type",
                machine.accelerator_count,
                "acceleratorType beside it, e.g. NVIDIA_TESLA_T4",
            )
        empty = not pool.replica_count and not pool.container_spec.image_uri
        if i and empty:
            continue
        _check_machine(machine, f"{where}[{i}].machineSpec", bad)
        if not pool.container_spec.image_uri and not pool.python_package_spec.executor_image_uri:
            bad(f"{where}[{i}]", "no image", None, "containerSpec.imageUri or pythonPackageSpec")
        if not pool.replica_count:
            bad(f"{where}[{i}].replicaCount", "a pool with no replicas", 0, "1 or more, or {}")
        for spec in ("containerSpec", "pythonPackageSpec"):
            message = pool.container_spec if spec == "containerSpec" else pool.python_package_spec
            for j, variable in enumerate(message.env):
                if not _ENV_NAME.fullmatch(variable.name):
                    bad(
                        f"{where}[{i}].{spec}.env[{j}].name",
                        "not a variable name",
                        variable.name or None,
                        "a C identifier, as Vertex requires (e.g. MODE)",
                    )
    problems.raise_all()


def _check_machine(machine: Any, path: str, bad: Callable[[str, str, Any, str], None]) -> None:
    """The machine is one Vertex trains on, and holds its accelerators (`machines.json`)."""
    if machine.accelerator_type and not hasattr(machine.accelerator_type, "name"):
        # Proto3 JSON takes any number for an enum; the SDK keeps one it does not know as int.
        bad(
            f"{path}.acceleratorType",
            "not an accelerator type",
            int(machine.accelerator_type),
            "a name such as NVIDIA_TESLA_T4",
        )
        return
    if not machine.machine_type:
        return  # the service's default machine
    instead = machines.unknown(machine.machine_type)
    if instead is not None:
        bad(f"{path}.machineType", "not a machine Vertex trains on", machine.machine_type, instead)
        return
    accelerator = machine.accelerator_type.name if machine.accelerator_type else None
    found = machines.problem(machine.machine_type, accelerator, machine.accelerator_count)
    if found is not None:
        bad(f"{path}.acceleratorType", found[0], accelerator, found[1])


def _has(document: Mapping[str, Any], *names: str) -> bool:
    return any(n in document for n in names)


def recognizes(document: Mapping[str, Any]) -> bool:
    """True for a CustomJob, a HyperparameterTuningJob or a bare CustomJobSpec."""
    return _has(
        document,
        "jobSpec",
        "job_spec",
        "trialJobSpec",
        "trial_job_spec",
        "studySpec",
        "study_spec",
        "workerPoolSpecs",
        "worker_pool_specs",
    )


def load(document: dict[str, Any], source: str, name: str) -> JobDocument:
    """Check a Vertex job file's document; written back as the SDK reads it."""
    if _has(document, "workerPoolSpecs", "worker_pool_specs"):
        # A bare CustomJobSpec, as `gcloud ai custom-jobs create --config` takes it.
        document = {"displayName": name, "jobSpec": document}
    tuning = _has(document, "trialJobSpec", "trial_job_spec", "studySpec", "study_spec")
    kind = TUNING_JOB if tuning else CUSTOM_JOB
    message = parse(kind, {"displayName": name, **document}, source=source)
    return JobDocument("vertex", kind, sdk.message_to_dict(message), source)


def rename(document: dict[str, Any], name: str) -> dict[str, Any]:
    """The document with `name` as its display name (--name with --job)."""
    return {**document, "displayName": name}
