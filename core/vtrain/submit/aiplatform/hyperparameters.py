"""The study file `vtrain tune` runs, as AI Platform's trainingInput.hyperparameters."""

from __future__ import annotations

from typing import Any

from vtrain.submit.study import SCALES
from vtrain.tune.study import Parameter, Study


def hyperparameters(study: Study) -> dict[str, Any]:
    """trainingInput.hyperparameters (a HyperparameterSpec) for `study`."""
    spec: dict[str, Any] = {
        "goal": study.metric.goal,
        "hyperparameterMetricTag": study.metric.metric_id,
        "maxTrials": study.max_trial_count,
        "maxParallelTrials": study.parallel_trial_count,
        "algorithm": study.algorithm,
        "params": [_parameter(p) for p in study.parameters],
    }
    if study.max_failed_trial_count:
        spec["maxFailedTrials"] = study.max_failed_trial_count
    return spec


def _parameter(p: Parameter) -> dict[str, Any]:
    out: dict[str, Any] = {"parameterName": p.parameter_id, "type": p.type}
    if p.type in ("DOUBLE", "INTEGER"):
        out.update(minValue=p.min_value, maxValue=p.max_value, scaleType=SCALES[p.scale])
    elif p.type == "DISCRETE":
        out.update(discreteValues=list(p.values), scaleType=SCALES[p.scale])
    else:
        out["categoricalValues"] = list(p.values)
    return out


_SCALES_BACK = {"NONE": "LINEAR"}


def study_of(spec: dict[str, Any], source: str) -> Study:
    """trainingInput.hyperparameters read back as a Study (the shape `vtrain tune` reads)."""
    from vtrain.tune.study_file import study_from_document

    params = []
    for p in spec.get("params", []):
        kind = p.get("type")
        spec_name = {
            "DOUBLE": "double_value_spec",
            "INTEGER": "integer_value_spec",
            "DISCRETE": "discrete_value_spec",
            "CATEGORICAL": "categorical_value_spec",
        }.get(kind, "double_value_spec")
        if kind in ("DOUBLE", "INTEGER"):
            value: dict[str, Any] = {"min_value": p.get("minValue"), "max_value": p.get("maxValue")}
        else:
            value = {"values": p.get("discreteValues") or p.get("categoricalValues")}
        param: dict[str, Any] = {"parameter_id": p.get("parameterName"), spec_name: value}
        if p.get("scaleType"):
            param["scale_type"] = _SCALES_BACK.get(p["scaleType"], p["scaleType"])
        params.append(param)
    return study_from_document(
        {
            "metrics": [
                {"metric_id": spec.get("hyperparameterMetricTag"), "goal": spec.get("goal")}
            ],
            "parameters": params,
            "algorithm": spec.get("algorithm", "ALGORITHM_UNSPECIFIED"),
            "max_trial_count": spec.get("maxTrials"),
            "parallel_trial_count": spec.get("maxParallelTrials", 1),
        },
        source=f"{source}: trainingInput.hyperparameters",
    )
