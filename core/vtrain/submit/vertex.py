"""A Vertex AI CustomJob or HyperparameterTuningJob, built and checked with the SDK's own types.

The document is Vertex's REST JSON (camelCase). `parse` reads it into the
SDK's `aiplatform_v1` message, which refuses unknown fields and enum values;
what vtrain prints is that message written back, so the rendered document is
exactly what the client sends.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.errors import ConfigError, VtrainError, raise_all
from vtrain.submit import sdk
from vtrain.submit.study_spec import vertex_study_spec, vertex_trial_counts
from vtrain.submit.topology import JobOptions, Pool, unknown_accelerators

REDUCTION_SERVER_IMAGE = "us-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"
CUSTOM_JOB = "CustomJob"
TUNING_JOB = "HyperparameterTuningJob"
# Pool positions are fixed: 0 the primary replica, 1 workers, 2 ps or Reduction Server,
# 3 evaluators.
MAX_POOLS = 4


def render(options: JobOptions) -> tuple[str, dict[str, Any]]:
    """(kind, document): a CustomJob, or a HyperparameterTuningJob when a study is given."""
    check_accelerators(options)
    spec = custom_job_spec(options)
    document: dict[str, Any] = {"displayName": options.name}
    if options.study is None:
        kind = CUSTOM_JOB
        document["jobSpec"] = spec
    else:
        kind = TUNING_JOB
        document["studySpec"] = vertex_study_spec(options.study)
        document.update(vertex_trial_counts(options.study))
        document["trialJobSpec"] = spec
    if options.labels:
        document["labels"] = dict(options.labels)
    message = parse(kind, document, source="vtrain submit vertex")
    return kind, sdk.message_to_dict(message)


def custom_job_spec(options: JobOptions) -> dict[str, Any]:
    """The CustomJobSpec: worker pools in Vertex's order, then the job-wide settings."""
    pools: list[dict[str, Any]] = [
        _pool(options, options.pool(CHIEF)),
        _pool(options, options.pool(WORKER)),
        _reduction_pool(options) if options.reduction_servers else _pool(options, options.pool(PS)),
        _pool(options, options.pool(EVALUATOR)),
    ]
    # An empty spec keeps a later pool's position; trailing empty ones are left out.
    while pools and not pools[-1]:
        pools.pop()
    spec: dict[str, Any] = {"workerPoolSpecs": pools}
    if options.output_dir:
        spec["baseOutputDirectory"] = {"outputUriPrefix": options.output_dir}
    scheduling: dict[str, Any] = {}
    if options.timeout:
        scheduling["timeout"] = f"{options.timeout}s"
    if options.restart_job:
        scheduling["restartJobOnWorkerRestart"] = True
    if scheduling:
        spec["scheduling"] = scheduling
    if options.service_account:
        spec["serviceAccount"] = options.service_account
    if options.network:
        spec["network"] = options.network
    return spec


def _pool(options: JobOptions, pool: Pool) -> dict[str, Any]:
    if not pool.count:
        return {}
    machine: dict[str, Any] = {"machineType": pool.machine_type}
    if pool.accelerator is not None:
        machine["acceleratorType"] = pool.accelerator.type
        machine["acceleratorCount"] = pool.accelerator.count
    env = [{"name": k, "value": v} for k, v in options.env]
    spec: dict[str, Any] = {"machineSpec": machine, "replicaCount": pool.count}
    if options.python_module:
        package: dict[str, Any] = {
            "executorImageUri": options.executor_image,
            "packageUris": list(options.package_uris),
            "pythonModule": options.python_module,
        }
        if options.args:
            package["args"] = list(options.args)
        if env:
            package["env"] = env
        spec["pythonPackageSpec"] = package
        return spec
    container: dict[str, Any] = {"imageUri": pool.image}
    if options.command:
        container["command"] = list(options.command)
    if options.args:
        container["args"] = list(options.args)
    if env:
        container["env"] = env
    spec["containerSpec"] = container
    return spec


def _reduction_pool(options: JobOptions) -> dict[str, Any]:
    return {
        "machineSpec": {"machineType": options.reduction_machine_type},
        "replicaCount": options.reduction_servers,
        "containerSpec": {"imageUri": REDUCTION_SERVER_IMAGE},
    }


def check_accelerators(options: JobOptions) -> None:
    """Refuse an accelerator type Vertex's AcceleratorType enum does not name."""
    known = [n for n in sdk.vertex_types().AcceleratorType.__members__ if "UNSPECIFIED" not in n]
    raise_all(unknown_accelerators(options, known, "a Vertex accelerator type"))


def parse(kind: str, document: Any, *, source: str) -> Any:
    """The SDK message of `document`; unknown fields, bad enums and bad pools are refused."""
    types = sdk.vertex_types()
    message_class = types.CustomJob if kind == CUSTOM_JOB else types.HyperparameterTuningJob
    # Through importlib: the SDK's modules stay `Any` to the type checker, untyped as they are.
    ParseError = importlib.import_module("google.protobuf.json_format").ParseError  # noqa: N806

    try:
        message = message_class.from_json(json.dumps(document), ignore_unknown_fields=False)
    except (ParseError, ValueError, TypeError) as e:
        raise ConfigError(
            f"not a valid {kind}: {str(e).splitlines()[0]}", source=source,
            hint="the SDK's aiplatform_v1 types refused it",
        ) from None  # fmt: skip
    spec_field = "job_spec" if kind == CUSTOM_JOB else "trial_job_spec"
    check_pools(getattr(message, spec_field), kind, source)
    return message


def check_pools(spec: Any, kind: str, source: str) -> None:
    """Vertex's rules for worker pools, which the message types alone do not enforce."""
    where = ("jobSpec" if kind == CUSTOM_JOB else "trialJobSpec") + ".workerPoolSpecs"
    errors: list[VtrainError] = []

    def bad(path: str, problem: str, value: Any, expected: str) -> None:
        errors.append(
            ConfigError(problem, source=source, path=path, value=value, expected=expected)
        )

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
            f"{where}[0].replicaCount", "the primary pool (the chief) runs exactly one replica",
            pools[0].replica_count, "1; put the other replicas in workerPoolSpecs[1]",
        )  # fmt: skip
    for i, pool in enumerate(pools):
        machine = pool.machine_spec
        if machine.accelerator_count and not machine.accelerator_type:
            bad(
                f"{where}[{i}].machineSpec.acceleratorCount",
                "an accelerator count with no accelerator type", machine.accelerator_count,
                "acceleratorType beside it, e.g. NVIDIA_TESLA_T4",
            )  # fmt: skip
        empty = not pool.replica_count and not pool.container_spec.image_uri
        if i and empty:
            continue
        if not pool.container_spec.image_uri and not pool.python_package_spec.executor_image_uri:
            bad(f"{where}[{i}]", "no image", None, "containerSpec.imageUri or pythonPackageSpec")
        if not pool.replica_count:
            bad(f"{where}[{i}].replicaCount", "a pool with no replicas", 0, "1 or more, or {}")
    raise_all(errors)


def job_spec_of(kind: str, document: dict[str, Any]) -> dict[str, Any]:
    """The CustomJobSpec inside a CustomJob or a tuning job's trialJobSpec."""
    spec: dict[str, Any] = document["jobSpec" if kind == CUSTOM_JOB else "trialJobSpec"]
    return spec
