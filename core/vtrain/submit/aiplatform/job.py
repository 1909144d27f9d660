"""AI Platform Training's Job document (config.yaml, its trainingInput), checked.

The document is checked against `GoogleCloudMlV1__Job` of the ml v1
discovery document that google-api-python-client ships, then against the
rules of AI Platform that the schema does not say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.errors import ConfigError, Problems
from vtrain.submit import sdk
from vtrain.submit.aiplatform.schema import problems as schema_problems
from vtrain.submit.document import JobDocument

KIND = "TrainingInput"
JOB_SCHEMA = "GoogleCloudMlV1__Job"
SHAPE = "trainingInput (config.yaml)"
# trainingInput's prefix of each role's fields: masterType, workerCount, parameterServerConfig...
PREFIXES = {CHIEF: "master", WORKER: "worker", PS: "parameterServer", EVALUATOR: "evaluator"}


def check(document: Any, *, source: str) -> None:
    """Refuse a config that breaks the ml v1 schema or AI Platform's own rules."""
    schemas = sdk.ml_v1_schemas()
    problems = Problems(source, kind=ConfigError)
    for path, problem, value in schema_problems(document, schemas[JOB_SCHEMA], schemas, ""):
        problems.bad(path, problem, value, f"{JOB_SCHEMA} (ml v1)")
    problems.raise_all()
    training = document.get("trainingInput")
    if not isinstance(training, dict):
        raise ConfigError("no trainingInput", source=source, expected="a Job with trainingInput")
    for key, name in (("masterType", "the master's machine type"), ("region", "the region")):
        if not training.get(key):
            problems.bad(f"trainingInput.{key}", "missing", expected=name)
    if training.get("scaleTier") not in (None, "CUSTOM"):
        problems.bad(
            "trainingInput.scaleTier",
            "a preset scale tier has no per-role machines",
            training.get("scaleTier"),
            "CUSTOM",
        )
    if not (training.get("masterConfig") or {}).get("imageUri"):
        problems.bad(
            "trainingInput.masterConfig.imageUri",
            "missing",
            expected="the master's container image (the other roles fall back to it)",
        )
    for prefix in PREFIXES.values():
        accelerator = (training.get(f"{prefix}Config") or {}).get("acceleratorConfig") or {}
        if accelerator.get("count") and not accelerator.get("type"):
            problems.bad(
                f"trainingInput.{prefix}Config.acceleratorConfig.count",
                "an accelerator count with no accelerator type",
                accelerator["count"],
                "type beside it, e.g. NVIDIA_TESLA_T4",
            )
    if int(training.get("parameterServerCount") or 0) and not int(training.get("workerCount") or 0):
        problems.bad(
            "trainingInput.parameterServerCount",
            "parameter servers serve workers, and the job has none",
            training["parameterServerCount"],
            "workerCount 1 or more beside it",
        )
    if int(training.get("evaluatorCount") or 0) and training.get("useChiefInTfConfig") is False:
        problems.bad(
            "trainingInput.useChiefInTfConfig",
            "an evaluator in the job implies useChiefInTfConfig",
            False,
            "true",
        )
    problems.raise_all()


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
