"""Which backends a run writes to, as the environment says (a pure function).

The JSON Lines record in the job's output folder is always written: it is the run's
own, which `vtrain.track.read_run` and the report read. `VTRAIN_TRACK` names the
others, comma-separated; unset, TensorBoard is on where the platform gave a
TensorBoard folder (AIP_TENSORBOARD_LOG_DIR), as Vertex AI does for a job with a
base output directory, MLflow where MLFLOW_TRACKING_URI names a server, and
Vertex AI Experiments where Vertex names the job's run (AIP_EXPERIMENT_RUN_NAME).
`VTRAIN_TRACK=none` writes the record alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.errors import ConfigError

VARIABLE = "VTRAIN_TRACK"
TENSORBOARD, MLFLOW, VERTEX = "tensorboard", "mlflow", "vertex"
KNOWN = (TENSORBOARD, MLFLOW, VERTEX)


def backends(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The backends besides the JSON Lines record; a ConfigError for an unknown one."""
    text = environ.get(VARIABLE)
    if text is None or not text.strip():
        given = {
            TENSORBOARD: "AIP_TENSORBOARD_LOG_DIR",
            MLFLOW: "MLFLOW_TRACKING_URI",
            VERTEX: "AIP_EXPERIMENT_RUN_NAME",
        }
        return tuple(name for name, variable in given.items() if environ.get(variable))
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    if names == ("none",):
        return ()
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise ConfigError(
            "unknown tracking backend",
            source=VARIABLE,
            value=text,
            expected="none, or a comma-separated list of " + ", ".join(KNOWN),
        )
    return names
