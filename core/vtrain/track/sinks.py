"""The backends a leader's run writes to besides its own record, made when the run opens.

Each is made per attempt, in the leader, from what `vtrain.track.backends` chose;
a backend that cannot be made (its extra missing) is said once by the run and
left out, and the others go on. A backend's library is imported by the sender's
thread, at its first write, never by the training loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from vtrain.storage import Location
from vtrain.track.backends import MLFLOW, TENSORBOARD, VERTEX
from vtrain.track.session import Backend, Sink


def made(
    names: tuple[str, ...],
    run: str,
    tensorboard: Callable[[], Location],
    environ: Mapping[str, str],
) -> list[Backend]:
    """The makers of backends `names` for vtrain's run `run`; `tensorboard` opens the
    TensorBoard folder (a `vtrain.storage.Location`)."""
    found: list[Backend] = []
    if TENSORBOARD in names:

        def events(attempt: int) -> tuple[Sink, str]:
            from vtrain.track.tensorboard import TensorBoardSink

            return TensorBoardSink(tensorboard(), attempt), f"TensorBoard events of run {run}"

        found.append(events)
    if MLFLOW in names:

        def mlflow(attempt: int) -> tuple[Sink, str]:
            from vtrain.track.mlflow_runs import EXTRA
            from vtrain.track.mlflow_sink import MlflowSink

            _installed("mlflow", "MLflow tracking", EXTRA, "mlflow")
            return MlflowSink(run, attempt, environ), f"MLflow run {run}"

        found.append(mlflow)
    if VERTEX in names:

        def vertex(attempt: int) -> tuple[Sink, str]:
            from vtrain.errors import ConfigError
            from vtrain.track.vertex_rules import RUN_VARIABLE, run_context
            from vtrain.track.vertex_sink import EXTRA, VertexSink

            contexts = run_context(environ)
            if contexts is None:
                raise ConfigError(
                    "no Vertex AI Experiments run to track to",
                    source=RUN_VARIABLE,
                    value=environ.get(RUN_VARIABLE),
                    expected="AIP_EXPERIMENT_NAME, AIP_EXPERIMENT_RUN_NAME, CLOUD_ML_PROJECT_ID "
                    "and CLOUD_ML_REGION, as Vertex sets them for a job with --experiment",
                )
            _installed(
                "google.cloud.aiplatform_v1",
                "Vertex AI Experiments tracking",
                EXTRA,
                "google-cloud-aiplatform",
            )
            return VertexSink(contexts, attempt, environ), f"Vertex AI Experiments run {run}"

        found.append(vertex)
    return found


def _installed(module: str, what: str, extra: str, package: str) -> None:
    """Say now that `module` is missing, rather than at each try of the sender's thread, without
    importing it here: a backend's import (a second or two) would hold the training loop."""
    from importlib.util import find_spec

    from vtrain.errors import MissingExtraError

    try:
        found = find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package missing
        found = False
    if not found:
        raise MissingExtraError(what, extra, module=package)
