"""A study: Vertex's StudySpec, plus the job's trial counts, as frozen values.

`vtrain.tune.study_file.read_study` reads one from a file; the format, and the
parser that checks it, live there. A parameter may have conditional children,
as Vertex's `conditional_parameter_specs`: searched, and passed to the trial,
only when the parent takes one of their parent values.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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
# A parent's type -> the field of a conditional spec that holds its parent values (Vertex's
# names). A DOUBLE parameter cannot be a parent.
PARENT_VALUES = {
    "INTEGER": "parent_int_values",
    "DISCRETE": "parent_discrete_values",
    "CATEGORICAL": "parent_categorical_values",
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
    conditions: tuple[Condition, ...] = ()
    """Children searched only for some of this parameter's values."""

    def children(self, value: Value) -> tuple[Parameter, ...]:
        """The conditional parameters that are searched when this one takes `value`."""
        return tuple(c.parameter for c in self.conditions if value in c.parent_values)

    def tree(self) -> Iterator[Parameter]:
        """This parameter, then its conditional ones, depth first."""
        yield self
        for condition in self.conditions:
            yield from condition.parameter.tree()

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
class Condition:
    """A conditional parameter: searched only when its parent takes one of `parent_values`."""

    parent_values: tuple[Value, ...]
    parameter: Parameter


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

    def all_parameters(self) -> tuple[Parameter, ...]:
        """Every parameter, conditional ones after their parent, depth first."""
        return tuple(q for p in self.parameters for q in p.tree())

    def flags(self, values: Mapping[str, Value]) -> list[str]:
        """The ``--name=value`` flags of a trial's values, in the study's order."""
        return [
            p.flag(values[p.parameter_id])
            for p in self.all_parameters()
            if p.parameter_id in values
        ]

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
    out: dict[str, Any] = {"parameter_id": p.parameter_id, spec_name: spec, "scale_type": p.scale}
    if p.conditions:
        out["conditional_parameter_specs"] = [
            {
                PARENT_VALUES[p.type]: {"values": list(c.parent_values)},
                "parameter_spec": _parameter_dict(c.parameter),
            }
            for c in p.conditions
        ]
    return out
