"""The study file `vtrain tune` runs, as Vertex's StudySpec and AI Platform's HyperparameterSpec.

Both services pass a trial's parameters as ``--name=value`` flags appended to
the job's arguments; `check_study_args` refuses a study whose flags the
command line cannot receive.
"""

from __future__ import annotations

import os
from typing import Any

from vtrain.errors import UsageError, VtrainError
from vtrain.tune.study import Parameter, Study

# vtrain's scale names -> the services' (Vertex and AI Platform spell them alike).
SCALES = {
    "LINEAR": "UNIT_LINEAR_SCALE",
    "LOG": "UNIT_LOG_SCALE",
    "REVERSE_LOG": "UNIT_REVERSE_LOG_SCALE",
}
_VERTEX_SPECS = {
    "DOUBLE": "doubleValueSpec",
    "INTEGER": "integerValueSpec",
    "DISCRETE": "discreteValueSpec",
    "CATEGORICAL": "categoricalValueSpec",
}
SHELLS = ("sh", "bash", "dash", "zsh", "ksh")


def vertex_study_spec(study: Study) -> dict[str, Any]:
    """The StudySpec of a HyperparameterTuningJob, in Vertex's JSON field names."""
    spec: dict[str, Any] = {
        "metrics": [{"metricId": study.metric.metric_id, "goal": study.metric.goal}],
        "parameters": [_vertex_parameter(p) for p in study.parameters],
        "measurementSelectionType": study.measurement_selection,
    }
    # ALGORITHM_UNSPECIFIED is the enum's zero: written out, it would not survive a round trip.
    if study.algorithm != "ALGORITHM_UNSPECIFIED":
        spec["algorithm"] = study.algorithm
    return spec


def vertex_trial_counts(study: Study) -> dict[str, Any]:
    """maxTrialCount, parallelTrialCount and maxFailedTrialCount of the tuning job."""
    counts = {
        "maxTrialCount": study.max_trial_count,
        "parallelTrialCount": study.parallel_trial_count,
    }
    if study.max_failed_trial_count:
        counts["maxFailedTrialCount"] = study.max_failed_trial_count
    return counts


def _vertex_parameter(p: Parameter) -> dict[str, Any]:
    value: dict[str, Any]
    if p.type in ("DOUBLE", "INTEGER"):
        assert p.min_value is not None and p.max_value is not None
        cast = float if p.type == "DOUBLE" else int
        value = {"minValue": cast(p.min_value), "maxValue": cast(p.max_value)}
    else:
        value = {"values": list(p.values)}
    out: dict[str, Any] = {"parameterId": p.parameter_id, _VERTEX_SPECS[p.type]: value}
    if p.type != "CATEGORICAL":
        out["scaleType"] = SCALES[p.scale]
    return out


def aiplatform_hyperparameters(study: Study) -> dict[str, Any]:
    """trainingInput.hyperparameters for the same study."""
    spec: dict[str, Any] = {
        "goal": study.metric.goal,
        "hyperparameterMetricTag": study.metric.metric_id,
        "maxTrials": study.max_trial_count,
        "maxParallelTrials": study.parallel_trial_count,
        "algorithm": study.algorithm,
        "params": [_aiplatform_parameter(p) for p in study.parameters],
    }
    if study.max_failed_trial_count:
        spec["maxFailedTrials"] = study.max_failed_trial_count
    return spec


def _aiplatform_parameter(p: Parameter) -> dict[str, Any]:
    out: dict[str, Any] = {"parameterName": p.parameter_id, "type": p.type}
    if p.type in ("DOUBLE", "INTEGER"):
        out.update(minValue=p.min_value, maxValue=p.max_value, scaleType=SCALES[p.scale])
    elif p.type == "DISCRETE":
        out.update(discreteValues=list(p.values), scaleType=SCALES[p.scale])
    else:
        out["categoricalValues"] = list(p.values)
    return out


def check_study_args(
    study: Study, command: tuple[str, ...], args: tuple[str, ...], source: str
) -> list[VtrainError]:
    """What stops a trial's ``--name=value`` flags from reaching the program, one error each."""
    errors: list[VtrainError] = []
    given = (*command, *args)
    if command and os.path.basename(command[0]) in SHELLS and "-c" in args:
        # `sh -c 'python train.py' --lr=0.1`: the flag becomes $0 of the script, not a flag.
        errors.append(
            UsageError(
                "a shell script does not receive the trials' flags",
                source="--study",
                value=" ".join(given)[:80],
                expected="the program itself as COMMAND",
                hint=f'append "$@" inside the script, or run the program directly ({source})',
            )  # fmt: skip
        )
    for p in study.parameters:
        flag = f"--{p.parameter_id}"
        fixed = [a for a in given if a == flag or a.startswith(flag + "=")]
        if fixed:
            errors.append(
                UsageError(
                    f"parameter {p.parameter_id!r} of the study is also fixed on the command line",
                    source="--study",
                    value=fixed[0],
                    expected=f"{flag} in the study or after --, not both",
                    hint="each trial appends its own value; the program would see two",
                )  # fmt: skip
            )
    return errors
