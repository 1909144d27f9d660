"""The numbers of a study file: counts, bounds and values in range, or an error that names them.

Properties over whole classes of input: integers beyond int()'s 4300-digit
limit and beyond float's range, digits that are not ASCII, files that are not
UTF-8, and grids too large to list. Whatever is accepted can be sampled.
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path
from typing import Any

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st
from tune_helpers import study

from vtrain.errors import ConfigError
from vtrain.tune.samplers import GridSampler, sample
from vtrain.tune.study import Study
from vtrain.tune.study_file import MAX_COUNT, MAX_INT64, parse_study, read_study

non_ascii_digits = st.text(
    st.characters(categories=["Nd"]).filter(lambda c: not "0" <= c <= "9"), min_size=1, max_size=3
)
numbers = st.one_of(
    st.integers(),
    st.integers(300, 4000).map(lambda digits: 10**digits),  # beyond float's range
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.builds(lambda z, n: "0" * z + "9" * n, st.integers(0, 3000), st.integers(1, 6000)),
    st.integers().map(str),
    non_ascii_digits,
    st.sampled_from(["1e400", "-1e400", "nan", "inf", " 4 ", "+4", "4.0", "0x10", "1_000"]),
)


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _parse(document: dict[str, Any], as_yaml: bool = False) -> Study | ConfigError:
    text = json.dumps(document)  # JSON is YAML too
    try:
        return parse_study(text, yaml=as_yaml)
    except ConfigError as e:
        assert "study: " in str(e)
        return e


@examples(200)
@given(
    field=st.sampled_from(["max_trial_count", "parallel_trial_count", "max_failed_trial_count"]),
    value=numbers,
)
def test_counts_are_int32_in_ascii_or_refused(field: str, value: Any) -> None:
    got = _parse(study(**{field: value}))
    if isinstance(got, Study):
        count = getattr(got, field)
        assert isinstance(count, int) and 0 <= count <= MAX_COUNT
        if isinstance(value, str):
            assert re.fullmatch(r"[+-]?[0-9]+", value.strip())


@examples(200)
@given(kind=st.sampled_from(["double_value_spec", "integer_value_spec"]), low=numbers, high=numbers)
def test_bounds_that_are_accepted_can_be_sampled(kind: str, low: Any, high: Any) -> None:
    document = study(
        parameters=[{"parameter_id": "x", kind: {"min_value": low, "max_value": high}}]
    )
    got = _parse(document)
    if isinstance(got, ConfigError):
        return
    p = got.parameters[0]
    assert p.min_value is not None and p.max_value is not None
    if kind == "integer_value_spec":
        assert -MAX_INT64 <= p.min_value <= p.max_value <= MAX_INT64
    rng = random.Random(0)
    for _ in range(3):
        x = sample(p, rng)
        assert p.min_value <= x <= p.max_value
        assert math.isfinite(x)
        p.flag(x)


@examples(200)
@given(values=st.lists(numbers, min_size=1, max_size=4))
def test_discrete_values_are_finite_or_refused(values: list[Any]) -> None:
    document = study(parameters=[{"parameter_id": "x", "discrete_value_spec": {"values": values}}])
    got = _parse(document)
    if isinstance(got, Study):
        assert all(math.isfinite(v) for v in got.parameters[0].values)  # type: ignore[arg-type]


@examples(200)
@given(number=st.builds(lambda z, n: "0" * z + "9" * n, st.integers(0, 3000), st.integers(1, 6000)))
def test_yaml_numbers_of_any_length(number: str) -> None:
    text = f"max_trial_count: {number}\nparallel_trial_count: 1\n"
    with pytest.raises(ConfigError):  # no metrics: refused, and never a ValueError from int()
        parse_study(text, yaml=True)


@examples(200)
@given(
    raw=st.binary(min_size=1, max_size=4).filter(lambda b: not _decodes(b)),
    where=st.integers(0, 3),
)
def test_a_study_file_that_is_not_utf8_is_named(
    tmp_path_factory: Any, raw: bytes, where: int
) -> None:
    text = json.dumps(study()).encode()
    comment = b'"display_name": "' + raw + b'", '
    data = text[:1] + comment + text[1:] if where else text + b"\n# " + raw
    path = Path(tmp_path_factory.getbasetemp()) / f"study-{where}.json"
    path.write_bytes(data)
    with pytest.raises(ConfigError, match=r"not UTF-8 text: byte 0x[0-9a-f]{2} on line \d+"):
        read_study(str(path))


@examples(200)
@given(
    low=st.integers(-MAX_INT64, MAX_INT64),
    width=st.integers(0, 2**64),
    axes=st.integers(1, 3),
    data=st.data(),
)
def test_a_grid_of_any_size_is_indexed_not_built(
    low: int, width: int, axes: int, data: st.DataObject
) -> None:
    high = min(low + width, MAX_INT64)
    parameters = [
        {"parameter_id": f"p{i}", "integer_value_spec": {"min_value": low, "max_value": high}}
        for i in range(axes)
    ]
    got = _parse(study(parameters=parameters, algorithm="GRID_SEARCH"))
    assert isinstance(got, Study)
    grid = GridSampler(got)
    assert grid.size == (high - low + 1) ** axes
    n = data.draw(st.integers(1, grid.size))
    point = grid.suggest(n)
    assert point is not None and all(low <= v <= high for v in point.values())
    assert grid.suggest(grid.size + 1) is None
