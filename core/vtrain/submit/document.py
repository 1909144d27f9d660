"""A checked job document, rendered or read back, and what it is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class JobDocument:
    """A checked job document and what it is."""

    platform: str
    """vertex, aiplatform or kubeflow."""
    kind: str
    """CustomJob, HyperparameterTuningJob, TrainingInput, or a Kubeflow kind (TFJob... TrainJob)."""
    document: dict[str, Any]
    source: str
    """Where it came from: the job file's path, or the command that rendered it."""
