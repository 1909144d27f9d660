"""Finding, or making, the one MLflow run of a job or trial, through MLflow's own client.

A run is found by its `vtrain.run` tag in the experiment that MLFLOW_EXPERIMENT_ID
or MLFLOW_EXPERIMENT_NAME names (made if missing), else MLflow's `Default`. The
leader's sink and `vtrain tune` (a study's parent run, its trials' child runs)
both open runs here. MLflow is imported only on this path (the `mlflow` extra).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from vtrain.errors import MissingExtraError
from vtrain.track.mlflow_rules import PARENT_TAG, RUN_TAG, run_filter

EXTRA = "mlflow"
URI_VARIABLE = "MLFLOW_TRACKING_URI"
DEFAULT_EXPERIMENT = "0"
"""MLflow's `Default` experiment, which every tracking server has."""
# MLflow's client retries a request 7 times over about 4 minutes by default. vtrain's sender
# retries with its own backoff, and says so in one line, so a request that fails should fail
# at once. Its client also prints a run's address on stdout when the run ends; vtrain says it
# once, in the log, when the run opens. A process's own settings win.
CLIENT_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "10",
    "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
}


def client(environ: Mapping[str, str]) -> Any:
    """MLflow's client for the server `environ` names (MLFLOW_TRACKING_URI)."""
    try:
        from mlflow import MlflowClient
    except ImportError as e:
        raise MissingExtraError("MLflow tracking", EXTRA, module="mlflow") from e
    for name, value in CLIENT_DEFAULTS.items():
        os.environ.setdefault(name, value)
    return MlflowClient(tracking_uri=environ.get(URI_VARIABLE) or None)


def address(mlflow: Any, experiment: str, run_id: str) -> str:
    """Where a person sees the run: its page on the server, or its id for a local store."""
    uri = str(mlflow.tracking_uri)
    if uri.startswith(("http://", "https://")):
        return f"{uri.rstrip('/')}/#/experiments/{experiment}/runs/{run_id}"
    return f"{run_id} in {uri}"


def experiment_id(mlflow: Any, environ: Mapping[str, str]) -> str:
    """The experiment runs go to, as MLflow's own variables name it (made if missing)."""
    if given := environ.get("MLFLOW_EXPERIMENT_ID"):
        return given
    name = environ.get("MLFLOW_EXPERIMENT_NAME")
    if not name:
        return DEFAULT_EXPERIMENT
    found = mlflow.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    from mlflow.exceptions import MlflowException

    try:
        return str(mlflow.create_experiment(name))
    except MlflowException:  # made by another job meanwhile
        return str(mlflow.get_experiment_by_name(name).experiment_id)


def find_run(mlflow: Any, experiment: str, run: str) -> Any | None:
    """The MLflow run tagged as vtrain's run `run`, the oldest if several; None if none."""
    found = mlflow.search_runs(
        [experiment], run_filter(run), max_results=1, order_by=["attributes.start_time ASC"]
    )
    return found[0] if found else None


def open_run(
    mlflow: Any,
    experiment: str,
    run: str,
    *,
    parent: str | None = None,
    tags: Mapping[str, str] | None = None,
) -> Any:
    """The MLflow run of vtrain's run `run`: found by its tag, else made (a child of the MLflow
    run id `parent`, if given)."""
    found = find_run(mlflow, experiment, run)
    if found is not None:
        return found
    made = {RUN_TAG: run, **(tags or {})}
    if parent is not None:
        made[PARENT_TAG] = parent
    return mlflow.create_run(experiment, tags=made, run_name=run)
