"""Katib: the study file `vtrain tune` runs, as an Experiment whose trials run the v1 job.

The Experiment (kubeflow.org/v1beta1) has the study's parameters, metric,
goal, algorithm and trial counts. Its trial template is the TFJob, PyTorchJob
or XGBoostJob of the same command line, with ``--name=${trialParameters.name}``
appended to every replica's arguments, as Vertex appends its flags. Its
metrics collector is Katib's File collector in JSON format, on the file
`vtrain.hypertune.report` writes: Katib's parser reads one JSON object per
line, a string value under the metric's name and a float `timestamp`, which
is the hypertune format. An Experiment is read back with the
`kubeflow_katib_api` models, then checked against the rules of Katib's
validating webhook. What a study says and Katib cannot is refused, naming it
(`refusals`). `experiment` builds one from a command line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from vtrain.context import DEFAULT_METRIC_FILE
from vtrain.errors import ConfigError, Problems, VtrainError
from vtrain.submit import sdk
from vtrain.submit.kubeflow.round_trip import round_trip_problems
from vtrain.tune.study import Study
from vtrain.tune.study_file import study_from_document

KIND = "Experiment"
GROUP, VERSION, PLURAL = "kubeflow.org", "v1beta1", "experiments"
API_VERSION = f"{GROUP}/{VERSION}"
# Vertex's algorithm -> Katib's. Vertex's default is Bayesian optimization (Vizier's GP bandit);
# Katib's bayesianoptimization is the same idea (scikit-optimize's GP).
ALGORITHMS = {
    "GRID_SEARCH": "grid",
    "RANDOM_SEARCH": "random",
    "ALGORITHM_UNSPECIFIED": "bayesianoptimization",
}
TYPES = {"DOUBLE": "double", "INTEGER": "int", "DISCRETE": "discrete", "CATEGORICAL": "categorical"}
# vtrain's scales -> feasibleSpace.distribution (Katib 0.18+); Katib has no reverse log.
DISTRIBUTIONS = {"LINEAR": "uniform", "LOG": "logUniform"}
# How Katib reads a trial's conditions from the status of a training-operator job.
SUCCEEDED = 'status.conditions.#(type=="Succeeded")#|#(status=="True")#'
FAILED = 'status.conditions.#(type=="Failed")#|#(status=="True")#'
# The labels the training operator puts on its pods: the primary pod is the leader's.
JOB_ROLE = "training.kubeflow.org/job-role"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
# Katib's own placeholders: a trial parameter's value, and a trial's own name.
PLACEHOLDER = re.compile(r"\$\{trialParameters\.(.+?)\}")
TRIAL_NAME = "${trialSpec.Name}"
NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def refusals(study: Study, source: str) -> list[VtrainError]:
    """What the study says that a Katib Experiment cannot, one error each, naming it."""
    problems = Problems(source)
    refuse = problems.bad

    for p in study.parameters:
        where = f"parameters.{p.parameter_id}"
        if p.conditions:
            refuse(
                f"{where}.conditional_parameter_specs",
                "Katib's ParameterSpec has no parent values: every parameter of an Experiment is "
                "searched in every trial",
                [c.parameter.parameter_id for c in p.conditions],
                "no conditional_parameter_specs with Katib (Vertex and vtrain tune take them)",
            )
        if p.scale == "REVERSE_LOG":
            refuse(
                f"{where}.scale_type",
                "Katib's feasibleSpace has no reverse-log distribution",
                "UNIT_REVERSE_LOG_SCALE",
                "UNIT_LINEAR_SCALE or UNIT_LOG_SCALE",
            )
        elif p.scale != "LINEAR" and p.type in ("DISCRETE", "CATEGORICAL"):
            refuse(
                f"{where}.scale_type",
                "Katib's list of values has no scale",
                p.scale,
                "no scale_type on a discrete parameter with Katib",
            )
    if study.max_failed_trial_count > study.max_trial_count:
        refuse(
            "max_failed_trial_count",
            "Katib refuses more failed trials than trials",
            study.max_failed_trial_count,
            f"at most max_trial_count ({study.max_trial_count})",
        )
    return problems.errors


def trial_name_parameter(study: Study) -> str:
    """The trial parameter that carries the trial's name: one no study parameter is called."""
    name = "trialName"
    ids = {p.parameter_id for p in study.parameters}
    while name in ids:
        name = "_" + name
    return name


def trial_args(study: Study) -> list[str]:
    """The flags Katib fills in for each trial, as Vertex appends them: ``--name=${...}``."""
    return [f"--{p.parameter_id}=${{trialParameters.{p.parameter_id}}}" for p in study.parameters]


def trial_env(study: Study) -> list[tuple[str, str]]:
    """What a trial's replicas are told: the metric's tag and file, and the trial's id."""
    return [
        ("CLOUD_ML_HP_METRIC_TAG", study.metric.metric_id),
        ("CLOUD_ML_HP_METRIC_FILE", DEFAULT_METRIC_FILE),
        ("CLOUD_ML_TRIAL_ID", f"${{trialParameters.{trial_name_parameter(study)}}}"),
    ]


def parse(document: Mapping[str, Any], *, source: str) -> Any:
    """The kubeflow_katib_api model of an Experiment."""
    m = sdk.katib_models()
    try:
        return m.V1beta1Experiment.from_dict(dict(document))
    except (ValueError, TypeError, AttributeError, OverflowError) as e:
        # pydantic's ValidationError: its second and third lines name the field and the problem.
        detail = " ".join(line.strip() for line in str(e).splitlines()[1:3])
        raise ConfigError(f"not a valid Experiment: {detail}", source=source) from None


def check(document: Mapping[str, Any], *, source: str) -> None:
    """Refuse an Experiment the models cannot hold, or that Katib's webhook would refuse.

    Its trial's job is checked by the caller, as any v1 job (`manifest.check`).
    """
    experiment = parse(document, source=source)
    problems = Problems(source, kind=ConfigError)
    round_trip_problems(
        document,
        experiment.to_dict(),
        models="kubeflow_katib_api",
        api_version=API_VERSION,
        problems=problems,
    )
    _webhook(document, problems)
    problems.raise_all()


def _webhook(document: Mapping[str, Any], problems: Problems) -> None:
    """The rules of Katib's validating webhook (experiment/validator) for what vtrain writes."""
    bad = problems.bad
    name = (document.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        bad("metadata.name", "not an Experiment name", name, "^[a-z]([-a-z0-9]*[a-z0-9])?$")
    spec = document.get("spec") or {}
    counts: dict[str, int | None] = {
        k: spec.get(k) for k in ("maxTrialCount", "parallelTrialCount", "maxFailedTrialCount")
    }
    for key, minimum in (
        ("maxTrialCount", 1),
        ("parallelTrialCount", 1),
        ("maxFailedTrialCount", 0),
    ):
        count = counts[key]
        if count is not None and count < minimum:
            bad(f"spec.{key}", "too small", count, f"{minimum} or more")
    most = counts["maxTrialCount"]
    for key in ("parallelTrialCount", "maxFailedTrialCount"):
        count = counts[key]
        if most is not None and count is not None and count > most:
            bad(f"spec.{key}", "more than spec.maxTrialCount", count, f"at most {most}")
    objective = spec.get("objective") or {}
    if objective.get("type") not in ("minimize", "maximize"):
        bad("spec.objective.type", "not a goal", objective.get("type"), "minimize or maximize")
    if not objective.get("objectiveMetricName"):
        bad("spec.objective.objectiveMetricName", "missing", expected="the metric's name")
    if not (spec.get("algorithm") or {}).get("algorithmName"):
        bad("spec.algorithm.algorithmName", "missing", expected="e.g. random, grid, tpe")
    parameters = spec.get("parameters") or []
    if not parameters:
        bad("spec.parameters", "no parameters", parameters, "at least one")
    for i, p in enumerate(parameters):
        space = p.get("feasibleSpace") or {}
        ranged = p.get("parameterType") in ("double", "int")
        if p.get("parameterType") not in TYPES.values():
            bad(
                f"spec.parameters[{i}].parameterType",
                "not a parameter type",
                p.get("parameterType"),
                ", ".join(TYPES.values()),
            )
        elif ranged and (space.get("list") or not (space.get("min") or space.get("max"))):
            bad(f"spec.parameters[{i}].feasibleSpace", "a range needs min and max, no list", space)
        elif not ranged and (space.get("min") or space.get("max") or space.get("step")):
            bad(f"spec.parameters[{i}].feasibleSpace", "a list takes no min, max or step", space)
    _trial_template(spec, bad)
    collector = spec.get("metricsCollectorSpec") or {}
    path = (collector.get("source") or {}).get("fileSystemPath") or {}
    if (collector.get("collector") or {}).get("kind") == "File":
        if path.get("kind") != "File" or not str(path.get("path", "")).startswith("/"):
            bad(
                "spec.metricsCollectorSpec.source.fileSystemPath",
                "not an absolute file path",
                path,
                "kind File and an absolute path",
            )
        if path.get("format") not in ("TEXT", "JSON"):
            bad(
                "spec.metricsCollectorSpec.source.fileSystemPath.format",
                "not a format",
                path.get("format"),
                "TEXT or JSON",
            )


def _trial_template(spec: Mapping[str, Any], bad: Any) -> None:
    """Katib's checks of the trial template: names, references, placeholders, trialSpec."""
    where = "spec.trialTemplate"
    template = spec.get("trialTemplate") or {}
    for key in ("primaryContainerName", "successCondition", "failureCondition", "trialSpec"):
        if not template.get(key):
            bad(f"{where}.{key}", "missing")
    names = {p.get("name") for p in spec.get("parameters") or []}
    declared: list[str] = []
    references: list[str] = []
    for i, p in enumerate(template.get("trialParameters") or []):
        name, reference = p.get("name") or "", p.get("reference") or ""
        if not name or not reference or "{" in name or "}" in name:
            bad(f"{where}.trialParameters[{i}]", "needs a name (no braces) and a reference", p)
        if name in declared or reference in references:
            bad(f"{where}.trialParameters[{i}]", "a name or reference given twice", p)
        if reference not in names and not reference.startswith("${trialSpec."):
            bad(
                f"{where}.trialParameters[{i}].reference",
                "not a parameter of spec.parameters",
                reference,
                " or ".join(sorted(map(str, names))),
            )
        declared.append(name)
        references.append(reference)
    trial_spec = template.get("trialSpec") or {}
    text = json.dumps(trial_spec)
    used = set(PLACEHOLDER.findall(text))
    for name in declared:
        if name not in used:
            bad(
                f"{where}.trialParameters",
                f"${{trialParameters.{name}}} is not in the trialSpec",
                name,
                "every trial parameter used in the trialSpec",
            )
    for name in sorted(used - set(declared)):
        placeholder = f"${{trialParameters.{name}}}"
        bad(
            f"{where}.trialSpec",
            "a placeholder no trial parameter fills",
            placeholder,
            "a trialParameters entry for it",
        )
    meta = trial_spec.get("metadata") or {}
    if meta.get("name") or meta.get("namespace"):
        bad(
            f"{where}.trialSpec.metadata",
            "Katib names each trial's job itself",
            meta,
            "no metadata.name or metadata.namespace",
        )
    if not trial_spec.get("apiVersion") or not trial_spec.get("kind"):
        bad(f"{where}.trialSpec", "no apiVersion or kind", sorted(trial_spec), "both")


def study_of(document: Mapping[str, Any], source: str) -> Study:
    """The study an Experiment runs, read back into the study file's shape."""
    spec = document["spec"]
    objective = spec["objective"]
    algorithms = {katib: vertex for vertex, katib in ALGORITHMS.items()}
    types = {katib: vertex for vertex, katib in TYPES.items()}
    scales = {"uniform": "UNIT_LINEAR_SCALE", "logUniform": "UNIT_LOG_SCALE"}
    params = []
    for p in spec["parameters"]:
        kind, space = types.get(p["parameterType"], "DOUBLE"), p.get("feasibleSpace") or {}
        spec_name = kind.lower() + "_value_spec"
        if kind in ("DOUBLE", "INTEGER"):
            value: dict[str, Any] = {"min_value": space.get("min"), "max_value": space.get("max")}
        else:
            items = space.get("list") or []
            value = {"values": items if kind == "CATEGORICAL" else [_number(v) for v in items]}
        param: dict[str, Any] = {"parameter_id": p["name"], spec_name: value}
        distribution = space.get("distribution")
        if distribution:
            # A distribution with no Vertex scale (normal, logNormal) is named in the error.
            param["scale_type"] = scales.get(distribution, distribution)
        params.append(param)
    strategies = {s.get("name"): s.get("value") for s in objective.get("metricStrategies") or []}
    latest = strategies.get(objective["objectiveMetricName"], "latest") == "latest"
    counts = {
        "max_trial_count": spec.get("maxTrialCount"),
        "parallel_trial_count": spec.get("parallelTrialCount", 1),
    }
    if spec.get("maxFailedTrialCount"):
        counts["max_failed_trial_count"] = spec["maxFailedTrialCount"]
    return study_from_document(
        {
            "metrics": [
                {"metric_id": objective["objectiveMetricName"], "goal": objective["type"].upper()}
            ],
            "parameters": params,
            # Katib's other model-based searches (tpe, cmaes ...) are rehearsed as Vertex's.
            "algorithm": algorithms.get(
                spec["algorithm"]["algorithmName"], "ALGORITHM_UNSPECIFIED"
            ),
            "measurement_selection_type": "LAST_MEASUREMENT" if latest else "BEST_MEASUREMENT",
            **counts,
        },
        source=f"{source}: spec",
    )


def _number(text: str) -> int | float | str:
    try:
        number = float(text)
    except ValueError:
        return text  # the study parser names it
    return (
        int(number)
        if number.is_integer() and "." not in text and "e" not in text.lower()
        else number
    )
