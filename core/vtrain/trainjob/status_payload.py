"""What the leader posts to Kubeflow Trainer's status server: KEP-2779's body, within its limits
(pure).

The Trainer (v2.2.0, feature gate TrainJobStatus) injects into each trainer node
KUBEFLOW_TRAINER_SERVER_URL (the TrainJob's status endpoint, HTTPS),
KUBEFLOW_TRAINER_SERVER_CA_CERT and KUBEFLOW_TRAINER_SERVER_TOKEN (the paths of
the CA's PEM and of a projected service-account token, which rotates); its first
release named them KUBEFLOW_TRAINER_STATUS_*, read as well. The body, as its
status server decodes it (`UpdateTrainJobStatusRequest`):

    {"trainerStatus": {"progressPercentage": int 0..100, "estimatedRemainingSeconds":
     int >= 0, "metrics": [{"name": str, "value": str}] (at most 256, each string 1 to
     64 characters), "lastUpdatedTime": RFC 3339}}

A float where an int is asked, or a string past 64 characters, fails the whole post
(422): each is shaped here. Steps have no field of their own: they go as metrics.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

URL_VARIABLES = ("KUBEFLOW_TRAINER_SERVER_URL", "KUBEFLOW_TRAINER_STATUS_URL")
CA_VARIABLES = ("KUBEFLOW_TRAINER_SERVER_CA_CERT", "KUBEFLOW_TRAINER_STATUS_CA_CERT")
TOKEN_VARIABLES = ("KUBEFLOW_TRAINER_SERVER_TOKEN", "KUBEFLOW_TRAINER_STATUS_TOKEN")
MOST_METRICS = 256
LONGEST = 64
STEP, TOTAL = "step", "total_steps"
"""The metrics that carry the step count (the status has no field for it)."""


def given(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    """The first of `names` set in `environ` (the Trainer's current name, then its first)."""
    return next((environ[n] for n in names if environ.get(n)), None)


def body(
    step: int | None,
    total: int | None,
    rate: float | None,
    metrics: Mapping[str, float],
    now: float,
    *,
    done: bool = False,
) -> tuple[dict[str, Any], list[str]]:
    """The post's body, and the metric names left out (too long, past the count)."""
    status: dict[str, Any] = {"lastUpdatedTime": rfc3339(now)}
    if total and step is not None:
        # 100 only once the loop is done: a job at its last step still has its save ahead.
        share = 100 if done else min(99, max(0, step * 100 // total))
        status["progressPercentage"] = int(share)
        if rate and rate > 0 and not done:
            status["estimatedRemainingSeconds"] = math.ceil(max(0.0, (total - step) / rate))
    shown: list[dict[str, str]] = []
    left: list[str] = []
    counts = {STEP: step, TOTAL: total}
    for name, count in counts.items():
        if count is not None:
            shown.append({"name": name, "value": str(count)})
    for name, value in metrics.items():
        text = number(value)
        if not 1 <= len(name) <= LONGEST or text is None or len(shown) >= MOST_METRICS:
            left.append(name)
            continue
        shown.append({"name": name, "value": text})
    if shown:
        status["metrics"] = shown
    return {"trainerStatus": status}, left


def number(value: float) -> str | None:
    """A metric's value as the status holds it: a short text ('nan' and 'inf' too)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return str(value) if not math.isfinite(value) else f"{value:.8g}"


def rfc3339(seconds: float) -> str:
    """UTC, as Kubernetes' metav1.Time is written."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
