"""AI Platform Training's config.yaml (a Job with its trainingInput) and the gcloud command.

The document is checked against `GoogleCloudMlV1__Job` of the ml v1
discovery document that google-api-python-client ships. The service was
retired on 2025-01-31: this target renders, and never sends.
"""

from __future__ import annotations

from typing import Any

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.errors import ConfigError, UsageError, VtrainError, raise_all
from vtrain.submit import sdk
from vtrain.submit.discovery import problems
from vtrain.submit.study_spec import aiplatform_hyperparameters
from vtrain.submit.topology import JobOptions, Pool, unknown_accelerators

KIND = "TrainingInput"
JOB_SCHEMA = "GoogleCloudMlV1__Job"
RETIRED = (
    "AI Platform Training was retired on 2025-01-31: vtrain renders this job and sends nothing"
)
# trainingInput's prefix of each role's fields: masterType, workerCount, parameterServerConfig...
PREFIXES = {CHIEF: "master", WORKER: "worker", PS: "parameterServer", EVALUATOR: "evaluator"}
# The gcloud flags' spelling of the same prefixes.
GCLOUD_PREFIXES = {CHIEF: "master", WORKER: "worker", PS: "parameter-server"}


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
    if options.args:
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
        training["hyperparameters"] = aiplatform_hyperparameters(options.study)
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
    return config


def _check_options(options: JobOptions) -> None:
    """Refuse what trainingInput cannot say, naming the flag."""
    errors = unknown_accelerators(options, _accelerator_types(), "an AI Platform accelerator type")
    if options.count(EVALUATOR) and not options.use_chief:
        errors.append(
            UsageError(
                "an evaluator in the job implies useChiefInTfConfig",
                source="--no-use-chief",
                value={"evaluators": options.count(EVALUATOR)},
                expected="no --no-use-chief with --evaluators",
            )  # fmt: skip
        )
    raise_all(errors)


def _accelerator_types() -> list[str]:
    schema = sdk.ml_v1_schemas()["GoogleCloudMlV1__AcceleratorConfig"]
    return [t for t in schema["properties"]["type"]["enum"] if "UNSPECIFIED" not in t]


def check(document: Any, *, source: str) -> None:
    """Refuse a config that breaks the ml v1 schema or AI Platform's own rules."""
    schemas = sdk.ml_v1_schemas()
    errors: list[VtrainError] = [
        ConfigError(
            problem, source=source, path=path, value=value, expected=f"{JOB_SCHEMA} (ml v1)"
        )
        for path, problem, value in problems(document, schemas[JOB_SCHEMA], schemas, "")
    ]
    raise_all(errors)
    training = document.get("trainingInput")
    if not isinstance(training, dict):
        raise ConfigError("no trainingInput", source=source, expected="a Job with trainingInput")
    for key, name in (("masterType", "the master's machine type"),
                      ("region", "the region")):  # fmt: skip
        if not training.get(key):
            errors.append(
                ConfigError("missing", source=source, path=f"trainingInput.{key}", expected=name)
            )
    if training.get("scaleTier") not in (None, "CUSTOM"):
        errors.append(
            ConfigError(
                "a preset scale tier has no per-role machines",
                source=source,
                path="trainingInput.scaleTier",
                value=training.get("scaleTier"),
                expected="CUSTOM",
            )  # fmt: skip
        )
    if not (training.get("masterConfig") or {}).get("imageUri"):
        errors.append(
            ConfigError(
                "missing",
                source=source,
                path="trainingInput.masterConfig.imageUri",
                expected="the master's container image (the other roles fall back to it)",
            )  # fmt: skip
        )
    for prefix in ("master", "worker", "parameterServer", "evaluator"):
        accelerator = (training.get(f"{prefix}Config") or {}).get("acceleratorConfig") or {}
        if accelerator.get("count") and not accelerator.get("type"):
            errors.append(
                ConfigError(
                    "an accelerator count with no accelerator type",
                    source=source,
                    path=f"trainingInput.{prefix}Config.acceleratorConfig.count",
                    value=accelerator["count"],
                    expected="type beside it, e.g. NVIDIA_TESLA_T4",
                )  # fmt: skip
            )
    if int(training.get("evaluatorCount") or 0) and training.get("useChiefInTfConfig") is False:
        errors.append(
            ConfigError(
                "an evaluator in the job implies useChiefInTfConfig",
                source=source,
                path="trainingInput.useChiefInTfConfig",
                value=False,
                expected="true",
            )  # fmt: skip
        )
    raise_all(errors)


def gcloud_words(
    options: JobOptions, config_path: str = "config.yaml", *, flags_only: bool = False
) -> list[str]:
    """The equivalent `gcloud ai-platform jobs submit training` command, word by word."""
    words = ["gcloud", "ai-platform", "jobs", "submit", "training", options.name]
    words.append(f"--region={options.region}")
    if options.project:
        words.append(f"--project={options.project}")
    if not flags_only:
        # Evaluators, hyperparameters and scheduling exist only in the file: it carries all.
        words.append(f"--config={config_path}")
        return words
    words.append("--scale-tier=custom")
    for role, prefix in GCLOUD_PREFIXES.items():
        pool = options.pool(role)
        if not pool.count:
            continue
        if role != CHIEF:
            words.append(f"--{prefix}-count={pool.count}")
        words.append(f"--{prefix}-machine-type={pool.machine_type}")
        words.append(f"--{prefix}-image-uri={pool.image}")
        if pool.accelerator is not None:
            a = pool.accelerator
            words.append(f"--{prefix}-accelerator=count={a.count},type={a.type.lower()}")
    if options.use_chief:
        words.append("--use-chief-in-tf-config=true")
    if options.output_dir:
        words.append(f"--job-dir={options.output_dir}")
    if options.service_account:
        words.append(f"--service-account={options.service_account}")
    if options.labels:
        words.append("--labels=" + ",".join(f"{k}={v}" for k, v in options.labels))
    if options.args:
        words.extend(["--", *options.args])
    return words
