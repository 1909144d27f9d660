"""What Kubeflow Trainer's status server refuses (pure): the checks a rehearsal's stand-in makes.

As `pkg/statusserver` decodes an `UpdateTrainJobStatusRequest`: only
`trainerStatus`; `progressPercentage` an int of 0 to 100;
`estimatedRemainingSeconds` an int of at least 0; `metrics` at most 256 of
{"name", "value"}, each a string of 1 to 64 characters; `lastUpdatedTime` set, in
RFC 3339. A refusal is a 422 there; here it is the reason, or None.
"""

from __future__ import annotations

import datetime
from typing import Any

from vtrain.trainjob.status_payload import LONGEST, MOST_METRICS

PATH = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs/{name}/status"
MOST_BYTES = 1 << 16
"""The largest body the server reads (64 KiB); past it, 413."""
_INTS = (("progressPercentage", 0, 100), ("estimatedRemainingSeconds", 0, 2**31 - 1))


def problem(document: Any) -> str | None:
    """Why the Trainer would refuse `document` (422), or None."""
    if not isinstance(document, dict) or set(document) - {"trainerStatus"}:
        return "not an UpdateTrainJobStatusRequest: only trainerStatus"
    status = document.get("trainerStatus")
    if status is None:
        return None
    if not isinstance(status, dict):
        return "trainerStatus is not an object"
    for key, low, high in _INTS:
        value = status.get(key)
        if value is not None and (type(value) is not int or not low <= value <= high):
            return f"{key}: {value!r} is not an int of {low} to {high}"
    metrics = status.get("metrics", [])
    if not isinstance(metrics, list) or len(metrics) > MOST_METRICS:
        return f"metrics: a list of at most {MOST_METRICS}"
    for m in metrics:
        if not isinstance(m, dict) or set(m) != {"name", "value"}:
            return f"metrics: {m!r} is not a name and a value"
        for key in ("name", "value"):
            if not isinstance(m[key], str) or not 1 <= len(m[key]) <= LONGEST:
                return f"metrics: {key} {m[key]!r} is not a string of 1 to {LONGEST} characters"
    when = status.get("lastUpdatedTime")
    if not isinstance(when, str):
        return "lastUpdatedTime: required"
    try:
        datetime.datetime.fromisoformat(when.replace("Z", "+00:00"))
    except ValueError:
        return f"lastUpdatedTime: {when!r} is not RFC 3339"
    return None


def shown(status: dict[str, Any]) -> str:
    """A trainerStatus in a line: progress, time left, metrics (as the TrainJob holds them)."""
    parts = []
    if "progressPercentage" in status:
        parts.append(f"progressPercentage {status['progressPercentage']}")
    if "estimatedRemainingSeconds" in status:
        parts.append(f"estimatedRemainingSeconds {status['estimatedRemainingSeconds']}")
    metrics = status.get("metrics") or []
    if metrics:
        parts.append("metrics " + ", ".join(f"{m['name']}={m['value']}" for m in metrics))
    return "; ".join(parts) or "no progress and no metrics"
