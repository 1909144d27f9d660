"""Which backends a run writes to, from the environment (a table)."""

from __future__ import annotations

import pytest

from vtrain.errors import ConfigError
from vtrain.track.backends import VARIABLE, backends


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, ()),
        ({"AIP_TENSORBOARD_LOG_DIR": "gs://b/job/logs/"}, ("tensorboard",)),
        ({"AIP_TENSORBOARD_LOG_DIR": ""}, ()),
        ({VARIABLE: "none", "AIP_TENSORBOARD_LOG_DIR": "/logs"}, ()),
        ({VARIABLE: "TensorBoard"}, ("tensorboard",)),
        ({VARIABLE: " tensorboard , tensorboard "}, ("tensorboard",)),
        ({VARIABLE: "", "AIP_TENSORBOARD_LOG_DIR": "/logs"}, ("tensorboard",)),
        ({"MLFLOW_TRACKING_URI": "http://127.0.0.1:5000"}, ("mlflow",)),
        (
            {"MLFLOW_TRACKING_URI": "http://h", "AIP_TENSORBOARD_LOG_DIR": "/l"},
            ("tensorboard", "mlflow"),
        ),
        ({VARIABLE: "none", "MLFLOW_TRACKING_URI": "http://h"}, ()),
        ({VARIABLE: "MLflow,tensorboard"}, ("mlflow", "tensorboard")),
    ],
)
def test_backends(environ: dict[str, str], expected: tuple[str, ...]) -> None:
    assert backends(environ) == expected


@pytest.mark.parametrize("value", ["mlfow", "tensorboard,wandb", "none,tensorboard"])
def test_an_unknown_backend_names_the_variable_and_the_known_ones(value: str) -> None:
    with pytest.raises(ConfigError, match=f"{VARIABLE}.*tensorboard"):
        backends({VARIABLE: value})
