"""The study file: reading one into a Study, with every problem in it reported at once.

A study file is YAML (needs the `tune` extra) or JSON (standard library only)::

    metrics:
      - metric_id: loss              # the tag the trial reports under
        goal: MINIMIZE               # or MAXIMIZE
    parameters:
      - parameter_id: learning_rate
        double_value_spec: {min_value: 0.0001, max_value: 0.1}
        scale_type: UNIT_LOG_SCALE   # LINEAR, LOG, REVERSE_LOG or Vertex's UNIT_*_SCALE
      - parameter_id: layers
        integer_value_spec: {min_value: 1, max_value: 4}
      - parameter_id: batch_size
        discrete_value_spec: {values: [16, 32, 64]}
      - parameter_id: optimizer
        categorical_value_spec: {values: [adam, sgd]}
    algorithm: RANDOM_SEARCH         # GRID_SEARCH, or ALGORITHM_UNSPECIFIED (model-based)
    max_trial_count: 20
    parallel_trial_count: 4
    max_failed_trial_count: 3

A parameter may hold Vertex's `conditional_parameter_specs`: parameters searched
only when it takes one of their parent values (`parent_int_values`,
`parent_discrete_values` or `parent_categorical_values`, by the parent's type)::

      - parameter_id: optimizer
        categorical_value_spec: {values: [adam, sgd]}
        conditional_parameter_specs:
          - parent_categorical_values: {values: [sgd]}
            parameter_spec:
              parameter_id: momentum
              double_value_spec: {min_value: 0.0, max_value: 0.99}

Field names may be snake_case or camelCase, as Vertex's JSON accepts both, and
the StudySpec may sit under `study_spec` beside the counts, as in a
`gcloud ai hp-tuning-jobs create --config` file (its `trial_job_spec` is ignored).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from typing import Any

from vtrain.cluster.fields import BLANKS
from vtrain.errors import ConfigError, MissingExtraError, Problems
from vtrain.hypertune.metric_file import RESERVED_KEYS
from vtrain.tune.study import PARENT_VALUES, VALUE_SPECS, Condition, Metric, Parameter, Study, Value

GOALS = ("MAXIMIZE", "MINIMIZE")
ALGORITHMS = ("ALGORITHM_UNSPECIFIED", "GRID_SEARCH", "RANDOM_SEARCH")
SELECTIONS = ("LAST_MEASUREMENT", "BEST_MEASUREMENT")
SCALES = {
    "LINEAR": "LINEAR",
    "UNIT_LINEAR_SCALE": "LINEAR",
    "SCALE_TYPE_UNSPECIFIED": "LINEAR",
    "LOG": "LOG",
    "UNIT_LOG_SCALE": "LOG",
    "REVERSE_LOG": "REVERSE_LOG",
    "UNIT_REVERSE_LOG_SCALE": "REVERSE_LOG",
}
# Vertex fields the local runner accepts and does not act on.
IGNORED = (
    "display_name",
    "trial_job_spec",
    "observation_noise",
    "decay_curve_stopping_spec",
    "median_automated_stopping_spec",
    "convex_automated_stopping_spec",
    "study_stopping_config",
    "search_algorithm_spec",
    "encryption_spec",
    "labels",
)
_FLAG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# Sign, leading zeros, the digits that count; ASCII only, as \d would take '١٢٣'.
_INTEGER = re.compile(r"([+-]?)(?=[0-9])0*([0-9]*)")
# Vertex's bounds are int64 and its trial counts int32.
MAX_INT64 = 2**63 - 1
MAX_COUNT = 2**31 - 1


def read_study(path: str) -> Study:
    """Read a .yaml/.yml (needs pyyaml) or .json study file, within `vtrain.documents`' bounds."""
    from vtrain.documents import read_text

    text = read_text(path, "the study file")
    return parse_study(text, source=path, yaml=not path.endswith(".json"))


def parse_study(text: str, *, source: str = "study", yaml: bool = True) -> Study:
    """Parse a study document; `yaml=False` reads JSON with the standard library only."""
    from vtrain.documents import parse_json, parse_yaml

    if not yaml:
        document = parse_json(text, source)
    else:
        try:
            import yaml as pyyaml  # type: ignore[import-untyped]
        except ImportError:
            raise MissingExtraError("a YAML study file", "tune", module="yaml") from None
        document = parse_yaml(text, source, pyyaml)
    return study_from_document(document, source=source)


def study_from_document(document: Any, *, source: str = "study") -> Study:
    """Build a study from parsed JSON/YAML; every problem found is reported at once."""
    return _Parser(source).study(document)


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(w.capitalize() for w in rest)


class _Fields:
    """One mapping of the document: fields looked up by snake or camel name, paths for errors."""

    def __init__(self, parser: _Parser, mapping: Mapping[str, Any], path: str) -> None:
        self.parser, self.mapping, self.path = parser, mapping, path
        self.used: set[str] = set()

    def key(self, name: str) -> str | None:
        """The spelling of `name` the document used, or None when absent."""
        for spelling in (name, _camel(name)):
            if spelling in self.mapping:
                self.used.add(spelling)
                return spelling
        return None

    def where(self, name: str) -> str:
        spelled = self.key(name) or name
        return f"{self.path}.{spelled}" if self.path else spelled

    def get(self, name: str, default: Any = None) -> Any:
        key = self.key(name)
        return default if key is None else self.mapping[key]

    def unknown(self, known: tuple[str, ...]) -> None:
        """Report fields that are neither known nor ignored: usually a typo."""
        known_names = {s for n in known for s in (n, _camel(n))}
        ignored_names = {s for n in IGNORED for s in (n, _camel(n))}
        for key in self.mapping:
            where = f"{self.path}.{key}" if self.path else str(key)
            if key in ignored_names:
                self.parser.ignored.append(where)
            elif key not in known_names:
                self.parser.problems.bad(
                    where, "unknown field", expected="one of " + ", ".join(known)
                )


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.problems = Problems(source, kind=ConfigError)
        self.ignored: list[str] = []

    def fields(self, value: Any, path: str) -> _Fields | None:
        if not isinstance(value, Mapping):
            self.problems.bad(
                path or "(document)", "not a mapping", value, "a mapping of field names to values"
            )
            return None
        return _Fields(self, value, path)

    def study(self, document: Any) -> Study:
        top = self.fields(document, "")
        if top is None:
            self.problems.raise_all()
            raise AssertionError("unreachable")
        counts = ("max_trial_count", "parallel_trial_count", "max_failed_trial_count")
        spec_fields = ("metrics", "parameters", "algorithm", "measurement_selection_type")
        nested = top.get("study_spec")
        spec = top
        if nested is not None:
            spec = self.fields(nested, top.where("study_spec")) or _Fields(self, {}, "study_spec")
            top.unknown(("study_spec", *counts))
            spec.unknown(spec_fields)
        else:
            top.unknown(spec_fields + counts)
        metric = self.metric(spec)
        parameters = self.parameters(spec)
        algorithm = self.choice(spec, "algorithm", ALGORITHMS, "ALGORITHM_UNSPECIFIED")
        selection = self.choice(spec, "measurement_selection_type", SELECTIONS, "LAST_MEASUREMENT")
        max_trials = self.count(top, "max_trial_count", None, minimum=1)
        parallel = self.count(top, "parallel_trial_count", 1, minimum=1)
        max_failed = self.count(top, "max_failed_trial_count", 0, minimum=0)
        if algorithm == "GRID_SEARCH":
            for i, root in enumerate(parameters):
                for p in root.tree():
                    if p.type == "DOUBLE":
                        self.problems.bad(
                            f"{spec.where('parameters')}[{i}]",
                            "grid search cannot enumerate a DOUBLE parameter",
                            p.parameter_id,
                            "INTEGER, DISCRETE or CATEGORICAL parameters only, as on Vertex",
                        )
        if max_trials is not None and parallel is not None and parallel > max_trials:
            # Katib's webhook refuses it, and on Vertex the extra slots would never be used.
            self.problems.bad(
                top.where("parallel_trial_count"),
                "more trials in parallel than in the whole study",
                parallel,
                f"at most max_trial_count ({max_trials})",
            )
        self.problems.raise_all()
        assert metric is not None and max_trials is not None
        assert parallel is not None and max_failed is not None
        return Study(
            metric=metric,
            parameters=tuple(parameters),
            algorithm=algorithm,
            max_trial_count=max_trials,
            parallel_trial_count=parallel,
            max_failed_trial_count=max_failed,
            measurement_selection=selection,
            source=self.source,
            ignored=tuple(self.ignored),
        )

    def choice(self, f: _Fields, name: str, allowed: tuple[str, ...], default: str) -> str:
        value = f.get(name, default)
        if value not in allowed:
            self.problems.bad(f.where(name), "unknown value", value, "one of " + ", ".join(allowed))
            return default
        return str(value)

    def count(self, f: _Fields, name: str, default: int | None, *, minimum: int) -> int | None:
        value = f.get(name)
        if value is None:
            if default is None:
                self.problems.bad(f.where(name), "missing", expected=f"an integer >= {minimum}")
            return default
        number = _integer(value, MAX_COUNT)
        if number is None or number < minimum:
            expected = f"an integer >= {minimum}, at most {MAX_COUNT} (int32, as on Vertex)"
            self.problems.bad(f.where(name), "not a count", value, expected)
            return default
        return number

    def metric(self, spec: _Fields) -> Metric | None:
        metrics = spec.get("metrics")
        where = spec.where("metrics")
        if not isinstance(metrics, list) or len(metrics) != 1:
            self.problems.bad(
                where, "need exactly one metric", metrics, "a list of one {metric_id, goal}"
            )
            return None
        f = self.fields(metrics[0], f"{where}[0]")
        if f is None:
            return None
        f.unknown(("metric_id", "goal", "safety_config"))
        metric_id = f.get("metric_id")
        if not isinstance(metric_id, str) or not metric_id or metric_id in RESERVED_KEYS:
            self.problems.bad(
                f.where("metric_id"),
                "not a metric tag",
                metric_id,
                "a non-empty string other than " + ", ".join(sorted(RESERVED_KEYS)),
            )
        goal = self.choice(f, "goal", GOALS, "MAXIMIZE") if f.get("goal") is not None else None
        if goal is None:
            self.problems.bad(f.where("goal"), "missing", expected=" or ".join(GOALS))
        if not isinstance(metric_id, str) or goal is None:
            return None
        return Metric(metric_id, goal)

    def parameters(self, spec: _Fields) -> list[Parameter]:
        items = spec.get("parameters")
        where = spec.where("parameters")
        if not isinstance(items, list) or not items:
            self.problems.bad(where, "need at least one parameter", items, "a non-empty list")
            return []
        found: list[Parameter] = []
        seen: set[str] = set()
        for i, item in enumerate(items):
            parameter = self.parameter(item, f"{where}[{i}]")
            if parameter is None:
                continue
            # Conditional parameters are flags too: one id, one flag, across the whole tree.
            for p in parameter.tree():
                if p.parameter_id in seen:
                    self.problems.bad(
                        f"{where}[{i}].parameter_id" if p is parameter else f"{where}[{i}]",
                        "duplicate parameter",
                        p.parameter_id,
                        "each parameter_id once, conditional parameters included",
                    )
                seen.add(p.parameter_id)
            found.append(parameter)
        return found

    def parameter(self, item: Any, path: str) -> Parameter | None:
        f = self.fields(item, path)
        if f is None:
            return None
        f.unknown(("parameter_id", "scale_type", *VALUE_SPECS, "conditional_parameter_specs"))
        errors_before = len(self.problems)
        pid = f.get("parameter_id")
        if not isinstance(pid, str) or not _FLAG_NAME.fullmatch(pid):
            self.problems.bad(
                f.where("parameter_id"),
                "not a flag name",
                pid,
                "letters, digits, '_', '.' or '-', starting with a letter or '_'",
            )
        specs = [name for name in VALUE_SPECS if f.key(name) is not None]
        if len(specs) != 1:
            self.problems.bad(
                path,
                "need exactly one value spec",
                specs or None,
                "one of " + ", ".join(VALUE_SPECS),
            )
            return None
        kind = VALUE_SPECS[specs[0]]
        scale_name = f.get("scale_type", "LINEAR")
        scale = SCALES.get(scale_name) if isinstance(scale_name, str) else None
        if scale is None:
            self.problems.bad(
                f.where("scale_type"), "unknown scale", scale_name, "one of " + ", ".join(SCALES)
            )
            scale = "LINEAR"
        inner = self.fields(f.get(specs[0]), f.where(specs[0]))
        if inner is None:
            return None
        if kind in ("DOUBLE", "INTEGER"):
            inner.unknown(("min_value", "max_value", "default_value"))
            low, high = (self.bound(inner, n, kind) for n in ("min_value", "max_value"))
            if low is not None and high is not None:
                if low > high:
                    self.problems.bad(
                        inner.where("max_value"), "below min_value", high, f"at least {low}"
                    )
                if scale != "LINEAR" and low <= 0:
                    self.problems.bad(
                        inner.where("min_value"),
                        f"a {scale} scale needs a positive range",
                        low,
                        "min_value > 0",
                    )
            if len(self.problems) > errors_before:
                return None
            parameter = Parameter(str(pid), kind, min_value=low, max_value=high, scale=scale)
        else:
            inner.unknown(("values", "default_value"))
            values = self.values(inner, kind)
            if len(self.problems) > errors_before or values is None:
                return None
            parameter = Parameter(str(pid), kind, values=values, scale=scale)
        conditions = self.conditions(f, parameter)
        if len(self.problems) > errors_before:
            return None
        return dataclasses.replace(parameter, conditions=conditions)

    def conditions(self, f: _Fields, parent: Parameter) -> tuple[Condition, ...]:
        """The parent's conditional_parameter_specs: each a parameter and its parent values."""
        items = f.get("conditional_parameter_specs")
        if items is None:
            return ()
        where = f.where("conditional_parameter_specs")
        if parent.type not in PARENT_VALUES:
            self.problems.bad(
                where,
                f"a {parent.type} parameter cannot be a parent",
                parent.parameter_id,
                "conditional parameters under an INTEGER, DISCRETE or CATEGORICAL one, "
                "as on Vertex",
            )
            return ()
        if not isinstance(items, list) or not items:
            self.problems.bad(
                where, "need at least one conditional parameter", items, "a non-empty list"
            )
            return ()
        field = PARENT_VALUES[parent.type]
        found = []
        for i, item in enumerate(items):
            c = self.fields(item, f"{where}[{i}]")
            if c is None:
                continue
            c.unknown((*PARENT_VALUES.values(), "parameter_spec"))
            wrong = [n for n in PARENT_VALUES.values() if n != field and c.key(n) is not None]
            if wrong:
                self.problems.bad(
                    c.where(wrong[0]),
                    f"not the parent values of the {parent.type} parameter",
                    parent.parameter_id,
                    field,
                )
                continue
            values = self.parent_values(c, field, parent)
            child = self.parameter(c.get("parameter_spec"), c.where("parameter_spec"))
            if values is not None and child is not None:
                found.append(Condition(values, child))
        return tuple(found)

    def parent_values(self, c: _Fields, field: str, parent: Parameter) -> tuple[Value, ...] | None:
        """The values of `parent` that make a conditional parameter active; each one it can take."""
        holder = self.fields(c.get(field), c.where(field)) if c.key(field) else None
        if holder is None:
            if c.key(field) is None:
                self.problems.bad(c.where(field), "missing", expected=f"{field}: {{values: [...]}}")
            return None
        holder.unknown(("values",))
        values = holder.get("values")
        where = holder.where("values")
        if not isinstance(values, list) or not values:
            self.problems.bad(where, "need at least one parent value", values, "a non-empty list")
            return None
        found: list[Value] = []
        for i, v in enumerate(values):
            value: Value | None
            if parent.type == "INTEGER":
                value = _integer(v, MAX_INT64)
                assert parent.min_value is not None and parent.max_value is not None
                ok = value is not None and parent.min_value <= value <= parent.max_value
                takes = f"an integer from {int(parent.min_value)} to {int(parent.max_value)}"
            else:
                value = v if isinstance(v, str) == (parent.type == "CATEGORICAL") else None
                ok = value is not None and not isinstance(v, bool) and v in parent.values
                takes = "one of " + ", ".join(map(str, parent.values))
            if not ok or value is None:
                self.problems.bad(
                    f"{where}[{i}]", f"not a value of {parent.parameter_id!r}", v, takes
                )
            else:
                found.append(value)
        return tuple(found) if len(found) == len(values) else None

    def bound(self, f: _Fields, name: str, kind: str) -> float | None:
        value = f.get(name)
        number: float | None
        if kind == "INTEGER":
            number = _integer(value, MAX_INT64)
            expected = f"an integer from {-MAX_INT64} to {MAX_INT64} (int64, as on Vertex)"
        else:
            number = _number(value)
            expected = "a finite number"
        if number is None:
            if value is None:
                problem = "missing"
            elif isinstance(value, int) and not isinstance(value, bool):
                problem = "out of range"
            else:
                problem = "not a number"
            self.problems.bad(f.where(name), problem, value, expected)
        return number

    def values(self, f: _Fields, kind: str) -> tuple[Value, ...] | None:
        values = f.get("values")
        where = f.where("values")
        if not isinstance(values, list) or not values:
            self.problems.bad(where, "need at least one value", values, "a non-empty list")
            return None
        if kind == "CATEGORICAL":
            for i, v in enumerate(values):
                if not isinstance(v, str):
                    self.problems.bad(
                        f"{where}[{i}]",
                        "not a string",
                        v,
                        "a string (quote it: YAML reads yes/no/on/off/1.0 as other types)",
                    )
            if len(set(map(str, values))) != len(values):
                self.problems.bad(where, "duplicate values", values, "distinct strings")
            return tuple(str(v) for v in values)
        numbers: list[float] = []
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or _number(v) is None:
                self.problems.bad(f"{where}[{i}]", "not a number", v, "a finite number")
            else:
                numbers.append(v)
        if len(numbers) == len(values) and any(
            b <= a for a, b in zip(numbers, numbers[1:], strict=False)
        ):
            self.problems.bad(
                where,
                "not in increasing order",
                values,
                "distinct values, smallest first, as on Vertex",
            )
        # Keep ints as ints: a trial gets --batch_size=32, not 32.0.
        return tuple(numbers)


def _integer(value: Any, limit: int) -> int | None:
    """An integer from -limit to limit, else None."""
    # Vertex's JSON writes int64 fields as strings ("4"); YAML may give 4.0.
    number: int | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and (match := _INTEGER.fullmatch(value.strip(BLANKS))):
        # Leading zeros count toward int()'s 4300-digit limit; the digits after them decide.
        digits = match[2] or "0"
        number = int(match[1] + digits) if len(digits) <= len(str(limit)) else None
    return number if number is not None and -limit <= number <= limit else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    if isinstance(value, str) and not value.isascii():
        return None  # float() takes '١٫٥' too
    try:
        number = float(value)
    except (ValueError, OverflowError):  # an int beyond 1.8e308 overflows
        return None
    return number if math.isfinite(number) else None
