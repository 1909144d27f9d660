"""One trial's folder and environment: what Vertex gives a trial, under ``<output>/<trial>/``."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping

from vtrain.local.environment import inherited

# The chief's metric file inside a trial's folder; `vtrain local run --trial` puts it at the
# same place (vtrain.local.environment.metric_file), so one reader serves both kinds of trial.
METRIC_FILE = os.path.join("hypertune", "chief-0.metrics")
LOG_FILE = "trial.log"


def trial_folder(output_dir: str, trial_id: str) -> str:
    """``<output>/<trial>``: everything one trial writes."""
    return os.path.join(output_dir, trial_id)


def trial_environment(
    base: Mapping[str, str], output_dir: str, trial_id: str, metric_tag: str
) -> dict[str, str]:
    """The variables Vertex sets on a single-replica trial, laid out under `output_dir`."""
    folder = trial_folder(output_dir, trial_id)
    env = inherited(base)
    cluster_spec = {
        "cluster": {"workerpool0": [f"127.0.0.1:{_free_port()}"]},
        "environment": "cloud",
        "task": {"type": "workerpool0", "index": 0, "trial": trial_id},
        "job": {"baseOutputDirectory": {"outputUriPrefix": output_dir}},
    }
    env.update(
        CLUSTER_SPEC=json.dumps(cluster_spec),
        CLOUD_ML_TRIAL_ID=trial_id,
        CLOUD_ML_HP_METRIC_FILE=os.path.join(folder, METRIC_FILE),
        CLOUD_ML_HP_METRIC_TAG=metric_tag,
        AIP_MODEL_DIR=os.path.join(folder, "model") + os.sep,
        AIP_CHECKPOINT_DIR=os.path.join(folder, "checkpoints") + os.sep,
        AIP_TENSORBOARD_LOG_DIR=os.path.join(folder, "logs") + os.sep,
    )
    return env


def _free_port() -> int:
    # Nothing connects to a single replica's own address; it only has to be a real one.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
