"""A Vertex AI CustomJob or HyperparameterTuningJob, built and checked with the SDK's own types.

What vtrain prints is the SDK message `job.parse` read, written back, so the
rendered document is exactly what the client sends.
"""

from __future__ import annotations

from typing import Any

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.errors import Problems, UsageError
from vtrain.submit import sdk
from vtrain.submit.options import JobOptions
from vtrain.submit.pools import Pool, unknown_accelerators
from vtrain.submit.vertex import machines
from vtrain.submit.vertex.job import CUSTOM_JOB, TUNING_JOB, parse
from vtrain.submit.vertex.staging import planned_uri
from vtrain.submit.vertex.study import study_spec, trial_counts

REDUCTION_SERVER_IMAGE = "us-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"


def render(options: JobOptions) -> tuple[str, dict[str, Any]]:
    """(kind, document): a CustomJob, or a HyperparameterTuningJob when a study is given."""
    check_accelerators(options)
    check_machines(options)
    check_scheduling(options)
    spec = custom_job_spec(options)
    document: dict[str, Any] = {"displayName": options.name}
    if options.study is None:
        kind = CUSTOM_JOB
        document["jobSpec"] = spec
    else:
        kind = TUNING_JOB
        document["studySpec"] = study_spec(options.study)
        document.update(trial_counts(options.study))
        document["trialJobSpec"] = spec
    if options.labels:
        document["labels"] = dict(options.labels)
    message = parse(kind, document, source="vtrain submit vertex")
    return kind, sdk.message_to_dict(message)


def custom_job_spec(options: JobOptions) -> dict[str, Any]:
    """The CustomJobSpec: worker pools in Vertex's order, then the job-wide settings."""
    uris = package_uris(options)
    pools: list[dict[str, Any]] = [
        _pool(options, options.pool(CHIEF), uris),
        _pool(options, options.pool(WORKER), uris),
        _reduction_pool(options)
        if options.reduction_servers
        else _pool(options, options.pool(PS), uris),
        _pool(options, options.pool(EVALUATOR), uris),
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
    if options.scheduling:
        scheduling["strategy"] = options.scheduling
    if options.max_wait is not None:
        scheduling["maxWaitDuration"] = f"{options.max_wait}s"
    if scheduling:
        spec["scheduling"] = scheduling
    if options.service_account:
        spec["serviceAccount"] = options.service_account
    if options.network:
        spec["network"] = options.network
    spec.update(options.experiment)  # experiment, experimentRun, tensorboard
    return spec


def package_uris(options: JobOptions) -> list[str]:
    """Where the executor finds --python-package: its gs:// URI, or where `stage` puts it."""
    package = options.python_package
    if not package:
        return []
    if package.startswith("gs://"):
        return [package]
    assert options.staging is not None  # the rules refuse a local package without --staging
    return [planned_uri(package, options.staging)]


def _pool(options: JobOptions, pool: Pool, package_uris: list[str]) -> dict[str, Any]:
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
            "packageUris": package_uris,
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
    problems = Problems()
    unknown_accelerators(options.pools, known, "a Vertex accelerator type", problems)
    problems.raise_all()


def check_machines(options: JobOptions) -> None:
    """Refuse a machine Vertex does not train on, or one that cannot hold the pool's accelerator."""
    # A worker pool that inherits the chief's settings would say the same again: once.
    problems = Problems(dedupe=True)
    hint = f"vtrain's table of Vertex's machines, checked {machines.table().checked}"
    pools = [
        p for p in options.pools if p.count and not (p.role == PS and options.reduction_servers)
    ]
    for pool in pools:
        assert pool.machine_type is not None  # Vertex's rules give every pool a machine
        instead = machines.unknown(pool.machine_type)
        if instead is not None:
            problems.bad(
                pool.machine_flag,
                "not a machine Vertex trains on",
                pool.machine_type,
                instead,
                hint,
            )
            continue
        a = pool.accelerator
        found = machines.problem(pool.machine_type, a.type if a else None, a.count if a else 0)
        if found is None:
            continue
        flag = a.flag if a is not None else pool.accelerator_flag
        expected = found[1]
        if a is None and pool.role in (PS, EVALUATOR):
            expected += (
                f" ({flag}), or a --{pool.role}-machine-type that holds none: a {pool.role} gets "
                "no accelerator unless its own flag asks for one"
            )
        problems.bad(flag, found[0], f"{a.type}:{a.count}" if a else "none", expected, hint)
    if options.reduction_servers:
        instead = machines.unknown(options.reduction_machine_type)
        if instead is not None:
            problems.bad(
                "--reduction-server-machine-type",
                "not a machine Vertex trains on",
                options.reduction_machine_type,
                instead,
                hint,
            )
    problems.raise_all()


def check_scheduling(options: JobOptions) -> None:
    """Refuse a scheduling strategy that the aiplatform v1 discovery document does not list."""
    if options.scheduling is None:
        return
    schema = sdk.aiplatform_v1_schemas()["GoogleCloudAiplatformV1Scheduling"]
    strategies = schema["properties"]["strategy"]["enum"]
    if options.scheduling not in strategies:
        flag = "--spot" if options.scheduling == "SPOT" else "--flex-start"
        raise UsageError(
            "the installed aiplatform v1 discovery document has no such scheduling strategy",
            source=flag,
            value=options.scheduling,
            expected="one of " + ", ".join(strategies),
            hint="upgrade google-api-python-client (the submit extra)",
        )
