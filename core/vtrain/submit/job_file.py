"""A job document read back: a rendered or hand-written CustomJob, config.yaml or manifest.

`read_job` tells the platform from the document's shape, checks it with that
engine's types or schema, and returns it in the form the engine would send.
`vtrain submit --job` sends it; `vtrain local run --job` rehearses it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from vtrain.errors import ConfigError


@dataclass(frozen=True)
class JobDocument:
    """A checked job document and what it is."""

    platform: str
    """vertex, aiplatform or kubeflow."""
    kind: str
    """CustomJob, HyperparameterTuningJob, TrainingInput, or a Kubeflow kind (TFJob... TrainJob)."""
    document: dict[str, Any]
    source: str


def read_job(path: str) -> JobDocument:
    """Read and check a .yaml/.yml or .json job file."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError(f"cannot read the job file: {e.strerror}", source=path) from None
    if path.endswith(".json"):
        try:
            document = json.loads(text)
        except ValueError as e:
            raise ConfigError(f"not valid JSON: {e}", source=path) from None
    else:
        from vtrain.submit.sdk import yaml_module

        yaml = yaml_module()
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ConfigError(f"not valid YAML: {str(e).splitlines()[0]}", source=path) from None
    name = os.path.splitext(os.path.basename(path))[0]
    return load_job(document, source=path, name=name)


def _has(document: dict[str, Any], *names: str) -> bool:
    return any(n in document for n in names)


def load_job(document: Any, *, source: str, name: str = "vtrain-job") -> JobDocument:
    """Check a parsed job document; the platform is told from its shape."""
    if not isinstance(document, dict):
        raise ConfigError(
            "not a job document", source=source, value=type(document).__name__,
            expected="a CustomJob, HyperparameterTuningJob, config.yaml or Kubeflow manifest",
        )  # fmt: skip
    if "kind" in document and "apiVersion" in document:
        from vtrain.submit import kubeflow

        kubeflow.check(document, source=source)
        return JobDocument("kubeflow", str(document["kind"]), document, source)
    if _has(document, "trainingInput", "training_input", "scaleTier", "masterConfig"):
        from vtrain.submit import aiplatform

        if not _has(document, "trainingInput"):
            # A bare TrainingInput (what CLUSTER_SPEC's `job` holds): the Job around it.
            document = {"trainingInput": document}
        aiplatform.check(document, source=source)
        return JobDocument("aiplatform", aiplatform.KIND, document, source)
    from vtrain.submit import vertex
    from vtrain.submit.sdk import message_to_dict

    if _has(document, "workerPoolSpecs", "worker_pool_specs"):
        # A bare CustomJobSpec, as `gcloud ai custom-jobs create --config` takes it.
        document = {"displayName": name, "jobSpec": document}
    if _has(document, "trialJobSpec", "trial_job_spec", "studySpec", "study_spec"):
        kind = vertex.TUNING_JOB
    elif _has(document, "jobSpec", "job_spec"):
        kind = vertex.CUSTOM_JOB
    else:
        raise ConfigError(
            "not a job vtrain knows", source=source, value=sorted(document)[:6],
            expected="jobSpec (CustomJob), trialJobSpec (HyperparameterTuningJob), "
            "trainingInput (config.yaml) or kind/apiVersion (Kubeflow)",
        )  # fmt: skip
    message = vertex.parse(kind, {"displayName": name, **document}, source=source)
    return JobDocument("vertex", kind, message_to_dict(message), source)
