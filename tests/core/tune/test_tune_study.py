"""Study files: Vertex's StudySpec fields, in YAML or JSON; errors name the field."""

from __future__ import annotations

import copy
import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from vtrain.errors import ConfigError, MissingExtraError
from vtrain.tune.study import Metric, Parameter, Study
from vtrain.tune.study_file import parse_study, read_study, study_from_document

YAML = """
metrics:
  - metric_id: loss
    goal: MINIMIZE
parameters:
  - parameter_id: learning_rate
    double_value_spec: {min_value: 0.0001, max_value: 0.1}
    scale_type: UNIT_LOG_SCALE
  - parameter_id: layers
    integer_value_spec: {min_value: 1, max_value: 4}
    scale_type: LINEAR
  - parameter_id: batch_size
    discrete_value_spec: {values: [16, 32, 64]}
  - parameter_id: optimizer
    categorical_value_spec: {values: [adam, sgd]}
algorithm: RANDOM_SEARCH
max_trial_count: 20
parallel_trial_count: 4
max_failed_trial_count: 3
"""

EXPECTED = Study(
    metric=Metric("loss", "MINIMIZE"),
    parameters=(
        Parameter("learning_rate", "DOUBLE", min_value=0.0001, max_value=0.1, scale="LOG"),
        Parameter("layers", "INTEGER", min_value=1, max_value=4),
        Parameter("batch_size", "DISCRETE", values=(16, 32, 64)),
        Parameter("optimizer", "CATEGORICAL", values=("adam", "sgd")),
    ),
    algorithm="RANDOM_SEARCH",
    max_trial_count=20,
    parallel_trial_count=4,
    max_failed_trial_count=3,
    source="study.yaml",
)

# The same study as a `gcloud ai hp-tuning-jobs create --config` file: camelCase, nested
# under studySpec, Vertex's int64-as-string, and a trialJobSpec the local runner ignores.
GCLOUD_JSON = {
    "displayName": "local",
    "maxTrialCount": 20,
    "parallelTrialCount": 4,
    "maxFailedTrialCount": "3",
    "studySpec": {
        "metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
        "parameters": [
            {
                "parameterId": "learning_rate",
                "scaleType": "UNIT_LOG_SCALE",
                "doubleValueSpec": {"minValue": 0.0001, "maxValue": 0.1},
            },
            {
                "parameterId": "layers",
                "integerValueSpec": {"minValue": "1", "maxValue": "4"},
                "scaleType": "UNIT_LINEAR_SCALE",
            },
            {"parameterId": "batch_size", "discreteValueSpec": {"values": [16, 32, 64]}},
            {"parameterId": "optimizer", "categoricalValueSpec": {"values": ["adam", "sgd"]}},
        ],
        "algorithm": "RANDOM_SEARCH",
    },
    "trialJobSpec": {"workerPoolSpecs": []},
}


def test_yaml_study_file(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(YAML) == DOCUMENT
    path = tmp_path / "study.yaml"
    path.write_text(YAML)
    study = read_study(str(path))
    assert study == replace(EXPECTED, source=str(path))


def test_gcloud_config_in_json_needs_only_the_standard_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # as if pyyaml were not installed
    path = tmp_path / "job.json"
    path.write_text(json.dumps(GCLOUD_JSON))
    study = read_study(str(path))
    assert study == replace(EXPECTED, source=str(path), ignored=("displayName", "trialJobSpec"))


def test_yaml_without_pyyaml_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(
        MissingExtraError,
        match=r"'yaml', needed for a YAML study file.*\"pyyaml>=6\" \(as vtrain\[tune\]",
    ):
        parse_study(YAML, source="study.yaml")


def test_defaults() -> None:
    study = study_from_document(
        {
            "metrics": [{"metric_id": "acc", "goal": "MAXIMIZE"}],
            "parameters": [
                {"parameter_id": "x", "double_value_spec": {"min_value": 0, "max_value": 1}}
            ],
            "max_trial_count": 5,
        }
    )
    assert (study.algorithm, study.parallel_trial_count, study.max_failed_trial_count) == (
        "ALGORITHM_UNSPECIFIED",
        1,
        0,
    )
    assert study.parameters[0].scale == "LINEAR"


def test_round_trip_through_to_dict() -> None:
    study = study_from_document(DOCUMENT, source="study.yaml")
    assert study_from_document(study.to_dict(), source="study.yaml") == study


@pytest.mark.parametrize(
    ("p", "value", "flag"),
    [
        (Parameter("lr", "DOUBLE", 0.0, 1.0), 0.01, "--lr=0.01"),
        (Parameter("lr", "DOUBLE", 0.0, 1.0), 1e-05, "--lr=1e-05"),
        (Parameter("n", "INTEGER", 1, 4), 3, "--n=3"),
        (Parameter("b", "DISCRETE", values=(16, 32)), 32, "--b=32"),
        (Parameter("b", "DISCRETE", values=(0.5, 1.5)), 1.5, "--b=1.5"),
        (Parameter("opt", "CATEGORICAL", values=("adam",)), "adam", "--opt=adam"),
    ],
)
def test_flags(p: Parameter, value: Any, flag: str) -> None:
    assert p.flag(value) == flag


# YAML above, as pyyaml reads it: the tests below run without pyyaml too.
DOCUMENT: dict[str, Any] = {
    "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
    "parameters": [
        {
            "parameter_id": "learning_rate",
            "scale_type": "UNIT_LOG_SCALE",
            "double_value_spec": {"min_value": 0.0001, "max_value": 0.1},
        },
        {
            "parameter_id": "layers",
            "integer_value_spec": {"min_value": 1, "max_value": 4},
            "scale_type": "LINEAR",
        },
        {"parameter_id": "batch_size", "discrete_value_spec": {"values": [16, 32, 64]}},
        {"parameter_id": "optimizer", "categorical_value_spec": {"values": ["adam", "sgd"]}},
    ],
    "algorithm": "RANDOM_SEARCH",
    "max_trial_count": 20,
    "parallel_trial_count": 4,
    "max_failed_trial_count": 3,
}


def edit(path: str, value: Any) -> dict[str, Any]:
    """The YAML study with the field at a dotted path (list indexes as numbers) set or deleted."""
    document = copy.deepcopy(DOCUMENT)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node: Any = document
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return document


DELETE = object()

P0, P1, P2, P3 = (f"parameters[{i}]" for i in range(4))
MOMENTUM = {"parameter_id": "momentum", "double_value_spec": {"min_value": 0, "max_value": 0.99}}
TWO_METRICS = [{"metric_id": "a", "goal": "MAXIMIZE"}, {"metric_id": "b", "goal": "MAXIMIZE"}]
# (field to change, its new value, the field the error names, how the message starts)
BAD = [
    ("parameters.2.scale_type", "LOG2", f"{P2}.scale_type", "unknown scale (got 'LOG2'); expected"),
    (
        "parameters.0.double_value_spec.min_value",
        0,
        f"{P0}.double_value_spec.min_value",
        "a LOG scale needs a positive range (got 0.0)",
    ),
    (
        "parameters.0.double_value_spec.max_value",
        "big",
        f"{P0}.double_value_spec.max_value",
        "not a number (got 'big')",
    ),
    (
        "parameters.1.integer_value_spec.max_value",
        0,
        f"{P1}.integer_value_spec.max_value",
        "below min_value (got 0); expected at least 1",
    ),
    (
        "parameters.1.integer_value_spec.min_value",
        1.5,
        f"{P1}.integer_value_spec.min_value",
        "not a number (got 1.5); expected an integer",
    ),
    (
        "parameters.1.integer_value_spec.min_value",
        DELETE,
        f"{P1}.integer_value_spec.min_value",
        "missing",
    ),
    (
        "parameters.2.discrete_value_spec.values",
        [32, 16],
        f"{P2}.discrete_value_spec.values",
        "not in increasing order",
    ),
    (
        "parameters.2.discrete_value_spec.values",
        [16, "x"],
        f"{P2}.discrete_value_spec.values[1]",
        "not a number (got 'x')",
    ),
    (
        "parameters.3.categorical_value_spec.values",
        [True, "a"],
        f"{P3}.categorical_value_spec.values[0]",
        "not a string (got True); expected a string (quote",
    ),
    (
        "parameters.3.categorical_value_spec.values",
        [],
        f"{P3}.categorical_value_spec.values",
        "need at least one value",
    ),
    ("parameters.3.parameter_id", "has space", f"{P3}.parameter_id", "not a flag name"),
    ("parameters.3.parameter_id", "layers", f"{P3}.parameter_id", "duplicate parameter"),
    ("parameters.3.categorical_value_spec", DELETE, P3, "need exactly one value spec"),
    ("parameters.3.double_value_spec", {"min_value": 0}, P3, "need exactly one value spec"),
    ("parameters.3.scale", "LOG", f"{P3}.scale", "unknown field; expected one of parameter_id"),
    (
        "parameters.3.conditional_parameter_specs",
        [{}],
        f"{P3}.conditional_parameter_specs[0].parent_categorical_values",
        "missing",
    ),
    (
        "parameters.3.conditional_parameter_specs",
        [],
        f"{P3}.conditional_parameter_specs",
        "need at least one conditional parameter",
    ),
    (
        "parameters.3.conditional_parameter_specs",
        [{"parent_categorical_values": {"values": ["rmsprop"]}, "parameter_spec": MOMENTUM}],
        f"{P3}.conditional_parameter_specs[0].parent_categorical_values.values[0]",
        "not a value of 'optimizer' (got 'rmsprop'); expected one of adam, sgd",
    ),
    (
        "parameters.1.conditional_parameter_specs",
        [{"parent_int_values": {"values": [5]}, "parameter_spec": MOMENTUM}],
        f"{P1}.conditional_parameter_specs[0].parent_int_values.values[0]",
        "not a value of 'layers' (got 5); expected an integer from 1 to 4",
    ),
    (
        "parameters.1.conditional_parameter_specs",
        [{"parent_categorical_values": {"values": ["2"]}, "parameter_spec": MOMENTUM}],
        f"{P1}.conditional_parameter_specs[0].parent_categorical_values",
        "not the parent values of the INTEGER parameter (got 'layers'); expected parent_int_values",
    ),
    (
        "parameters.0.conditional_parameter_specs",
        [{"parent_discrete_values": {"values": [0.1]}, "parameter_spec": MOMENTUM}],
        f"{P0}.conditional_parameter_specs",
        "a DOUBLE parameter cannot be a parent",
    ),
    (
        "parameters.3.conditional_parameter_specs",
        [
            {
                "parent_categorical_values": {"values": ["sgd"]},
                "parameter_spec": {**MOMENTUM, "parameter_id": "layers"},
            }
        ],
        P3,
        "duplicate parameter (got 'layers'); expected each parameter_id once, conditional",
    ),
    (
        "parameters.3.conditional_parameter_specs",
        [
            {
                "parent_categorical_values": {"values": ["sgd"]},
                "parameter_spec": {**MOMENTUM, "scale": "LOG"},
            }
        ],
        f"{P3}.conditional_parameter_specs[0].parameter_spec.scale",
        "unknown field",
    ),
    ("parameters", [], "parameters", "need at least one parameter"),
    ("metrics.0.goal", "BIG", "metrics[0].goal", "unknown value (got 'BIG'); expected one of MAXI"),
    ("metrics.0.goal", DELETE, "metrics[0].goal", "missing; expected MAXIMIZE or MINIMIZE"),
    ("metrics.0.metric_id", "trial", "metrics[0].metric_id", "not a metric tag (got 'trial')"),
    ("metrics", TWO_METRICS, "metrics", "need exactly one metric"),
    (
        "algorithm",
        "BAYES",
        "algorithm",
        "unknown value (got 'BAYES'); expected one of ALGORITHM_UNSPECIFIED, GRID_SEARCH",
    ),
    (
        "algorithm",
        "GRID_SEARCH",
        P0,
        "grid search cannot enumerate a DOUBLE parameter (got 'learning_rate')",
    ),
    ("max_trial_count", DELETE, "max_trial_count", "missing; expected an integer >= 1"),
    ("max_trial_count", 0, "max_trial_count", "not a count (got 0); expected an integer >= 1"),
    ("parallel_trial_count", "four", "parallel_trial_count", "not a count (got 'four')"),
    (
        "parallel_trial_count",
        21,
        "parallel_trial_count",
        "more trials in parallel than in the whole study (got 21); expected at most "
        "max_trial_count (20)",
    ),
    ("max_failed_trial_count", -1, "max_failed_trial_count", "not a count (got -1)"),
    ("max_trail_count", 3, "max_trail_count", "unknown field; expected one of metrics"),
    ("measurement_selection_type", "MEAN", "measurement_selection_type", "unknown value"),
]


@pytest.mark.parametrize(("path", "value", "field", "message"), BAD, ids=[b[0] for b in BAD])
def test_malformed_study_names_the_field(path: str, value: Any, field: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"study.yaml: {field}: {message}")):
        study_from_document(edit(path, value), source="study.yaml")


def test_every_problem_is_reported_at_once() -> None:
    document = edit("algorithm", "BAYES")
    document["max_trial_count"] = 0
    with pytest.raises(ConfigError, match=r"2 problems:\n.*algorithm.*\n.*max_trial_count"):
        study_from_document(document, source="study.yaml")


@pytest.mark.parametrize(
    ("text", "yaml", "match"),
    [
        ("[1, 2]", True, r"s: \(document\): not a mapping"),
        ("{", False, r"s: not valid JSON"),
        ("a: [", True, r"s: not valid YAML"),
    ],
)
def test_unreadable_documents(text: str, yaml: bool, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        parse_study(text, source="s", yaml=yaml)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope.yaml: cannot read the study file"):
        read_study(str(tmp_path / "nope.yaml"))
