"""A tuning metric is a finite number: report() refuses the rest, the reader survives anything.

`report()` refuses NaN, the infinities, text that float() reads as one ("1e400",
" -Infinity ") and ints beyond float's range, naming the tag. What another
writer put in a metric file is read without a crash, non-finite values kept
for the study runner to judge (tests/core/tune/test_tune_infeasible.py).
"""

from __future__ import annotations

import itertools
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.errors import UsageError
from vtrain.hypertune import report
from vtrain.hypertune.metric_file import metric_values

TAG = "loss"
non_finite_texts = st.builds(
    lambda pad, sign, word: f"{pad}{sign}{word}{pad}",
    st.sampled_from(["", " ", "\t"]),
    st.sampled_from(["", "+", "-"]),
    st.sampled_from(["nan", "NaN", "inf", "Infinity", "INF", "1e400", "9" * 400, "1e999999"]),
)
huge_ints = st.integers(400, 20_000).map(lambda digits: 10**digits) | st.integers(400, 5000).map(
    lambda digits: -(10**digits)
)
non_finite = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, Decimal("NaN"), Decimal("-Infinity")]),
    non_finite_texts,
    huge_ints,
    st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not math.isfinite(x)),
)
_numbers = itertools.count()
values = non_finite | st.floats() | st.integers() | st.text(max_size=8) | st.none()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for every example (hypothesis reruns a test; tmp_path is made once)."""
    return tmp_path_factory.mktemp("metrics")


def _finite(value: Any) -> bool:
    try:
        if isinstance(value, str) and not value.isascii():
            return False
        return math.isfinite(float(value))
    except (TypeError, ValueError, OverflowError):
        return False


@examples(200)
@given(value=non_finite)
def test_non_finite_values_are_refused_with_the_tag(scratch: Path, value: Any) -> None:
    env = {"CLOUD_ML_HP_METRIC_FILE": str(scratch / "refused")}
    with pytest.raises(UsageError, match=r"report: value: the metric 'loss' is not a finite"):
        report(value, TAG, environ=env)
    assert not (scratch / "refused").exists()


@examples(200)
@given(value=values, step=st.none() | st.integers() | st.floats() | st.text(max_size=5))
def test_report_writes_a_finite_value_or_raises_a_vtrain_error(
    scratch: Path, value: Any, step: Any
) -> None:
    # A fresh file each time: report() keeps one in memory per path, seeded once.
    path = scratch / f"metrics-{next(_numbers)}"
    try:
        report(value, TAG, step, environ={"CLOUD_ML_HP_METRIC_FILE": str(path)})
    except UsageError as e:
        assert str(e).startswith("vtrain.hypertune.report: ")
        assert not path.exists()
        return
    assert _finite(value)
    # The file is JSON, without the bare NaN/Infinity that json.dumps would allow.
    line = json.loads(path.read_text().splitlines()[-1], parse_constant=_refuse)
    assert math.isfinite(float(line[TAG]))


def _refuse(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | huge_ints,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


@examples(200)
@given(entries=st.lists(st.dictionaries(st.sampled_from([TAG, "other"]), json_values), max_size=5))
def test_metric_values_reads_whatever_another_writer_left(entries: list[dict[str, Any]]) -> None:
    got = metric_values(entries, TAG)
    readable = [e[TAG] for e in entries if TAG in e and _number_like(e[TAG])]
    assert len(got) == len(readable)
    for read, written in zip(got, readable, strict=True):
        if _finite(written):
            assert read == float(written)
        else:
            assert not math.isfinite(read)  # kept, for the runner to judge


def _number_like(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return False
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return value.isascii()
    return True
