"""A study: Vertex's StudySpec, plus the job's trial counts, as frozen values.

`vtrain.tune.study_file.read_study` reads one from a file; the format, and the
parser that checks it, live there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Value = int | float | str

# value-spec field -> parameter type
VALUE_SPECS = {
    "double_value_spec": "DOUBLE",
    "integer_value_spec": "INTEGER",
    "discrete_value_spec": "DISCRETE",
    "categorical_value_spec": "CATEGORICAL",
}


@dataclass(frozen=True)
class Metric:
    """The one metric a study optimises: the tag trials report under, and its goal."""

    metric_id: str
    goal: str

    def better(self, a: float, b: float) -> bool:
        """True when `a` beats `b` for this goal."""
        return a > b if self.goal == "MAXIMIZE" else a < b


@dataclass(frozen=True)
class Parameter:
    """One searched parameter: DOUBLE/INTEGER ranges with a scale, DISCRETE/CATEGORICAL values."""

    parameter_id: str
    type: str
    min_value: float | None = None
    max_value: float | None = None
    values: tuple[Value, ...] = ()
    scale: str = "LINEAR"

    def flag(self, value: Value) -> str:
        """The command-line flag a trial receives: ``--name=value``."""
        if self.type == "DOUBLE":
            text = repr(float(value))
        elif self.type == "INTEGER":
            text = str(int(value))
        else:
            text = str(value)
        return f"--{self.parameter_id}={text}"


@dataclass(frozen=True)
class Study:
    """A whole study: metric, search space, algorithm and trial counts."""

    metric: Metric
    parameters: tuple[Parameter, ...]
    algorithm: str
    max_trial_count: int
    parallel_trial_count: int = 1
    max_failed_trial_count: int = 0
    """0: no limit (on Vertex, 0 lets the service choose)."""
    measurement_selection: str = "LAST_MEASUREMENT"
    source: str = "study"
    ignored: tuple[str, ...] = field(default=())
    """Fields present in the file that the local runner does not act on."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, in the file's own field names (snake_case)."""
        return {
            "metrics": [{"metric_id": self.metric.metric_id, "goal": self.metric.goal}],
            "parameters": [_parameter_dict(p) for p in self.parameters],
            "algorithm": self.algorithm,
            "measurement_selection_type": self.measurement_selection,
            "max_trial_count": self.max_trial_count,
            "parallel_trial_count": self.parallel_trial_count,
            "max_failed_trial_count": self.max_failed_trial_count,
        }

    def search_space(self) -> dict[str, Any]:
        """What a finished trial's result depends on; a resumed study must not change it."""
        d = self.to_dict()
        return {
            k: d[k] for k in ("metrics", "parameters", "algorithm", "measurement_selection_type")
        }


def _parameter_dict(p: Parameter) -> dict[str, Any]:
    spec_name = next(k for k, v in VALUE_SPECS.items() if v == p.type)
    if p.type in ("DOUBLE", "INTEGER"):
        spec: dict[str, Any] = {"min_value": p.min_value, "max_value": p.max_value}
    else:
        spec = {"values": list(p.values)}
    return {"parameter_id": p.parameter_id, spec_name: spec, "scale_type": p.scale}
