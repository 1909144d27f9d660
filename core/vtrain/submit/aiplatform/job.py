"""AI Platform Training's Job document (config.yaml, its trainingInput), checked.

The document is checked against `GoogleCloudMlV1__Job` of the ml v1
discovery document that google-api-python-client ships, then against the
rules of AI Platform that the schema does not say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.errors import ConfigError, VtrainError, raise_all
from vtrain.submit import sdk
from vtrain.submit.aiplatform.schema import problems
from vtrain.submit.document import JobDocument

KIND = "TrainingInput"
JOB_SCHEMA = "GoogleCloudMlV1__Job"
SHAPE = "trainingInput (config.yaml)"
# trainingInput's prefix of each role's fields: masterType, workerCount, parameterServerConfig...
PREFIXES = {CHIEF: "master", WORKER: "worker", PS: "parameterServer", EVALUATOR: "evaluator"}


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
    for prefix in PREFIXES.values():
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
    if int(training.get("parameterServerCount") or 0) and not int(training.get("workerCount") or 0):
        errors.append(
            ConfigError(
                "parameter servers serve workers, and the job has none",
                source=source,
                path="trainingInput.parameterServerCount",
                value=training["parameterServerCount"],
                expected="workerCount 1 or more beside it",
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


def recognizes(document: Mapping[str, Any]) -> bool:
    """True for a Job with its trainingInput, or a bare TrainingInput."""
    names = ("trainingInput", "training_input", "scaleTier", "masterConfig")
    return any(n in document for n in names)


def load(document: dict[str, Any], source: str, name: str) -> JobDocument:
    """Check an AI Platform job file's document."""
    if "trainingInput" not in document:
        # A bare TrainingInput (what CLUSTER_SPEC's `job` holds): the Job around it.
        document = {"trainingInput": document}
    check(document, source=source)
    return JobDocument("aiplatform", KIND, document, source)


def rename(document: dict[str, Any], name: str) -> dict[str, Any]:
    """The document itself: a Job's id is gcloud's argument, not a field of config.yaml."""
    return document
