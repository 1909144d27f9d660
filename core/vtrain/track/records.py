"""A run's records: one JSON object a line, each with its attempt, and how attempts merge (pure).

Every record names the attempt that wrote it, so a step that a resumed attempt trained
again is never two values without saying which is whose. `series` keeps them all;
`merged` gives the run's curve: at a step two attempts logged, the later attempt's
value (what the model that went on was trained from), as MLflow's and TensorBoard's
own views of a run overwrite a step that comes again.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping
from typing import Any

from vtrain import json_lines
from vtrain.errors import UsageError

PARAMS, METRIC, TAGS, ARTIFACT, START, RESUME, END = (
    "params",
    "metric",
    "tags",
    "artifact",
    "start",
    "resume",
    "end",
)


def _name(name: object, source: str) -> str:
    if not isinstance(name, str) or not name or len(name) > 250:
        raise UsageError(
            "not a name",
            source=source,
            value=name,
            expected="a non-empty string of at most 250 characters",
        )
    return name


def metric_records(
    values: Mapping[str, Any], step: int, attempt: int, t: float
) -> list[dict[str, Any]]:
    """The records of `values` at `step`; a UsageError for a name or value that is not one."""
    if not isinstance(values, Mapping):
        raise UsageError("not a mapping", source="track.metrics", value=values, expected="a dict")
    step = checked_step(step)
    found = []
    for name, value in values.items():
        _name(name, "track.metrics")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            try:
                if isinstance(value, (bool, str)):
                    raise TypeError("a flag or a text is not a metric")
                value = float(value)  # a 0-d tensor or a NumPy number
            except (TypeError, ValueError):
                raise UsageError(
                    "not a number",
                    source=f"track.metrics[{name!r}]",
                    value=value,
                    expected="a number (float, int, a 0-d tensor)",
                ) from None
        number = float(value)
        # JSON has no NaN or infinity: they are kept as strings, and read back as floats.
        shown: float | str = number if math.isfinite(number) else str(number)
        found.append(
            {"kind": METRIC, "name": name, "value": shown, "step": step, "attempt": attempt, "t": t}
        )
    return found


def numbers(values: Mapping[str, Any]) -> dict[str, float]:
    """The entries of `values` that are numbers (a 0-d tensor, a NumPy number), as floats."""
    found = {}
    for name, value in values.items():
        if isinstance(name, str) and not isinstance(value, (bool, str)):
            try:
                found[name] = float(value)
            except (TypeError, ValueError):
                continue
    return found


def checked_step(step: object) -> int:
    """`step` as an int (a NumPy or 0-d tensor int too); a UsageError for anything else."""
    try:
        if isinstance(step, bool):
            raise TypeError("a flag")
        number = operator.index(step)  # type: ignore[arg-type]
    except TypeError:
        raise UsageError(
            "not a step", source="track.metrics(step=)", value=step, expected="an integer >= 0"
        ) from None
    if not 0 <= number < 2**63:
        raise UsageError(
            "out of range", source="track.metrics(step=)", value=step, expected="0 to 2**63 - 1"
        )
    return number


def mapping_record(kind: str, values: Mapping[str, Any], attempt: int, t: float) -> dict[str, Any]:
    """A record of params or tags: names checked, values as text (as every backend keeps them)."""
    if not isinstance(values, Mapping):
        raise UsageError("not a mapping", source=f"track.{kind}", value=values, expected="a dict")
    from vtrain.redact import HIDDEN, looks_secret

    # A script's flags (vars(args)) may hold a token: its value never reaches the run.
    shown = {
        _name(k, f"track.{kind}"): HIDDEN if looks_secret(k) else str(v) for k, v in values.items()
    }
    return {"kind": kind, "values": shown, "attempt": attempt, "t": t}


def line(record: Mapping[str, Any]) -> bytes:
    """One record as its line."""
    return json_lines.line(record)


def parse(lines: Iterable[bytes]) -> list[dict[str, Any]]:
    """The records of `lines`; a torn last line (a process killed mid-write) is skipped."""
    return json_lines.parse(lines, lambda r: "kind" in r)


def series(records: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[int, float, int]]]:
    """Every metric's values as (step, value, attempt), in the order written."""
    found: dict[str, list[tuple[int, float, int]]] = {}
    for r in records:
        if r.get("kind") == METRIC:
            found.setdefault(r["name"], []).append((r["step"], float(r["value"]), r["attempt"]))
    return found


def merged(records: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """The run's curves: each metric's (step, value), by step, the latest attempt's at a step
    two attempts logged (a resumed attempt redid it)."""
    curves = {}
    for name, values in series(records).items():
        best: dict[int, tuple[int, float]] = {}
        for step, value, attempt in values:
            if step not in best or attempt >= best[step][0]:
                best[step] = (attempt, value)
        curves[name] = [(step, best[step][1]) for step in sorted(best)]
    return curves
