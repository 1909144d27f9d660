"""The study file `vtrain tune` runs, as a HyperparameterTuningJob's StudySpec and trial counts."""

from __future__ import annotations

from typing import Any

from vtrain.submit.study import SCALES
from vtrain.tune.study import PARENT_VALUES, Parameter, Study

_SPECS = {
    "DOUBLE": "doubleValueSpec",
    "INTEGER": "integerValueSpec",
    "DISCRETE": "discreteValueSpec",
    "CATEGORICAL": "categoricalValueSpec",
}


def study_spec(study: Study) -> dict[str, Any]:
    """The StudySpec of a HyperparameterTuningJob, in Vertex's JSON field names."""
    spec: dict[str, Any] = {
        "metrics": [{"metricId": study.metric.metric_id, "goal": study.metric.goal}],
        "parameters": [_parameter(p) for p in study.parameters],
        "measurementSelectionType": study.measurement_selection,
    }
    # ALGORITHM_UNSPECIFIED is the enum's zero: written out, it would not survive a round trip.
    if study.algorithm != "ALGORITHM_UNSPECIFIED":
        spec["algorithm"] = study.algorithm
    return spec


def trial_counts(study: Study) -> dict[str, Any]:
    """maxTrialCount, parallelTrialCount and maxFailedTrialCount of the tuning job."""
    counts = {
        "maxTrialCount": study.max_trial_count,
        "parallelTrialCount": study.parallel_trial_count,
    }
    if study.max_failed_trial_count:
        counts["maxFailedTrialCount"] = study.max_failed_trial_count
    return counts


def _parameter(p: Parameter) -> dict[str, Any]:
    value: dict[str, Any]
    if p.type in ("DOUBLE", "INTEGER"):
        assert p.min_value is not None and p.max_value is not None
        cast = float if p.type == "DOUBLE" else int
        value = {"minValue": cast(p.min_value), "maxValue": cast(p.max_value)}
    else:
        value = {"values": list(p.values)}
    out: dict[str, Any] = {"parameterId": p.parameter_id, _SPECS[p.type]: value}
    if p.type != "CATEGORICAL":
        out["scaleType"] = SCALES[p.scale]
    if p.conditions:
        # parent_int_values -> parentIntValues: the study file's names, in Vertex's JSON.
        parent = _camel(PARENT_VALUES[p.type])
        out["conditionalParameterSpecs"] = [
            {parent: {"values": list(c.parent_values)}, "parameterSpec": _parameter(c.parameter)}
            for c in p.conditions
        ]
    return out


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(w.capitalize() for w in rest)
