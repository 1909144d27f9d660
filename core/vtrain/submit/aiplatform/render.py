"""AI Platform Training's config.yaml: a Job whose trainingInput holds every role's machines.

The service was retired on 2025-01-31: this target renders, and never sends.
"""

from __future__ import annotations

from typing import Any

from vtrain.cluster.roles import CHIEF, EVALUATOR
from vtrain.errors import Problems
from vtrain.submit import sdk
from vtrain.submit.aiplatform.hyperparameters import hyperparameters
from vtrain.submit.aiplatform.job import KIND, PREFIXES, check
from vtrain.submit.options import JobOptions
from vtrain.submit.pools import Pool, unknown_accelerators


def render(options: JobOptions) -> tuple[str, dict[str, Any]]:
    """(kind, document): config.yaml for `gcloud ai-platform jobs submit training --config`."""
    _check_options(options)
    training: dict[str, Any] = {"scaleTier": "CUSTOM"}
    for role, prefix in PREFIXES.items():
        pool = options.pool(role)
        if not pool.count:
            continue
        training[f"{prefix}Type"] = pool.machine_type
        if role != CHIEF:
            training[f"{prefix}Count"] = str(pool.count)
        training[f"{prefix}Config"] = _replica_config(options, pool)
    # TF2 strategies reject "master", and an evaluator in the job implies "chief" anyway.
    training["useChiefInTfConfig"] = options.use_chief or bool(options.count(EVALUATOR))
    training["region"] = options.region
    if options.args and not options.command:
        # Arguments of the image's own ENTRYPOINT; with a COMMAND they go beside it, per role:
        # containerCommand/containerArgs and trainingInput.args are mutually exclusive.
        training["args"] = list(options.args)
    if options.output_dir:
        training["jobDir"] = options.output_dir
    if options.timeout:
        training["scheduling"] = {"maxRunningTime": f"{options.timeout}s"}
    if options.service_account:
        training["serviceAccount"] = options.service_account
    if options.network:
        training["network"] = options.network
    if options.study is not None:
        training["hyperparameters"] = hyperparameters(options.study)
    document: dict[str, Any] = {"trainingInput": training}
    if options.labels:
        document["labels"] = dict(options.labels)
    check(document, source="vtrain submit aiplatform")
    return KIND, document


def _replica_config(options: JobOptions, pool: Pool) -> dict[str, Any]:
    config: dict[str, Any] = {"imageUri": pool.image}
    if pool.accelerator is not None:
        config["acceleratorConfig"] = {
            "count": str(pool.accelerator.count),
            "type": pool.accelerator.type,
        }
    if options.command:
        config["containerCommand"] = list(options.command)
        if options.args:
            config["containerArgs"] = list(options.args)
    return config


def _check_options(options: JobOptions) -> None:
    """Refuse what trainingInput cannot say, naming the flag."""
    problems = Problems()
    unknown_accelerators(
        options.pools, _accelerator_types(), "an AI Platform accelerator type", problems
    )
    if options.count(EVALUATOR) and not options.use_chief:
        problems.bad(
            "--no-use-chief",
            "an evaluator in the job implies useChiefInTfConfig",
            {"evaluators": options.count(EVALUATOR)},
            "no --no-use-chief with --evaluators",
        )
    problems.raise_all()


def _accelerator_types() -> list[str]:
    schema = sdk.ml_v1_schemas()["GoogleCloudMlV1__AcceleratorConfig"]
    return [t for t in schema["properties"]["type"]["enum"] if "UNSPECIFIED" not in t]
