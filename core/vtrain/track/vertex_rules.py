"""How a run's records become a Vertex AI Experiments run's metadata (pure).

An experiment run is a Metadata context (schema `system.ExperimentRun`) whose
metadata holds `_params`, `_metrics` (a summary: one value per metric) and
`_state`, as the Vertex SDK keeps them. The run's time series are TensorBoard's:
Vertex streams AIP_TENSORBOARD_LOG_DIR into the job's `--tensorboard` instance,
where vtrain's TensorBoard backend writes them. A metric's summary is its value at
the highest step logged, the later attempt's at a step two attempts logged: the
one the model that went on was trained from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vtrain.track.records import END, METRIC, PARAMS, RESUME, START

PARAMS_KEY, METRICS_KEY, STATE_KEY = "_params", "_metrics", "_state"
EXPERIMENT_VARIABLE, RUN_VARIABLE = "AIP_EXPERIMENT_NAME", "AIP_EXPERIMENT_RUN_NAME"
"""What Vertex gives a job whose CustomJob names an experiment and its run."""
STORE = "metadataStores/default"


def run_context(environ: Mapping[str, str]) -> tuple[str, str, str] | None:
    """The experiment's and the run's context names, and the run's id, from what Vertex
    gives the job; None where it names no run."""
    experiment, run = environ.get(EXPERIMENT_VARIABLE), environ.get(RUN_VARIABLE)
    project, region = environ.get("CLOUD_ML_PROJECT_ID"), environ.get("CLOUD_ML_REGION")
    if not (experiment and run and project and region):
        return None
    contexts = f"projects/{project}/locations/{region}/{STORE}/contexts"
    experiment = experiment.rpartition("/")[2]  # a name, or the context's whole name
    run = run.rpartition("/")[2].removeprefix(f"{experiment}-")
    return f"{contexts}/{experiment}", f"{contexts}/{experiment}-{run}", run


class Summary:
    """A run's params, metric summary and state, as records change them."""

    def __init__(self, metadata: Mapping[str, Any], attempt: int) -> None:
        self.params: dict[str, Any] = dict(metadata.get(PARAMS_KEY) or {})
        self.metrics: dict[str, float] = dict(metadata.get(METRICS_KEY) or {})
        self.state: str = str(metadata.get(STATE_KEY) or "RUNNING")
        self._attempt = attempt
        self._at: dict[str, tuple[int, int]] = {}  # metric -> (step, attempt) of its summary

    def add(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Apply `records` (parsed) to the summary."""
        for r in records:
            kind = r["kind"]
            if kind == PARAMS:
                self.params.update(r["values"])
            elif kind == METRIC:
                at = (r["step"], r["attempt"])
                if r["name"] not in self._at or at >= self._at[r["name"]]:
                    self._at[r["name"]] = at
                    self.metrics[r["name"]] = float(r["value"])
            elif kind == START:
                self.state = "RUNNING"
                self.metrics["vtrain.attempt"] = float(self._attempt)
            elif kind == RESUME:
                self.params[f"vtrain.attempt-{self._attempt}.resumed_step"] = float(r["step"])
            elif kind == END:
                self.state = "COMPLETE" if r.get("ok", True) else "FAILED"

    def metadata(self) -> dict[str, Any]:
        """The context's metadata."""
        return {PARAMS_KEY: self.params, METRICS_KEY: self.metrics, STATE_KEY: self.state}
