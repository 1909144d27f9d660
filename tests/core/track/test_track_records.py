"""The run's records without a backend: names, values, attempts, and how attempts merge."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vtrain.errors import UsageError
from vtrain.track.identity import attempt_file, attempts, next_attempt, run_name
from vtrain.track.records import (
    METRIC,
    line,
    mapping_record,
    merged,
    metric_records,
    parse,
    series,
)


@pytest.mark.parametrize(
    ("job", "trial", "fallback", "expected"),
    [
        ("local-20261206-1", None, "x", "local-20261206-1"),
        ("1234567890", "3", "x", "1234567890-trial-3"),
        (None, None, "20261206-120000-77", "20261206-120000-77"),
        (None, "2", "base", "base-trial-2"),
        ("projects/p/customJobs/42", None, "x", "projects-p-customJobs-42"),
        ("///", None, "x", "run"),
    ],
)
def test_run_name(job: str | None, trial: str | None, fallback: str, expected: str) -> None:
    assert run_name(job, trial, fallback) == expected


def test_attempts_from_a_listing() -> None:
    assert next_attempt([]) == 1
    names = [attempt_file(1), attempt_file(2), "artifacts", "attempt-x.jsonl", attempt_file(10)]
    assert attempts(names) == [1, 2, 10] and next_attempt(names) == 11


def test_metric_records_check_names_and_values() -> None:
    [r] = metric_records({"loss": 0.5}, 7, 2, 1.0)
    assert r == {"kind": METRIC, "name": "loss", "value": 0.5, "step": 7, "attempt": 2, "t": 1.0}
    [nan] = metric_records({"loss": float("nan")}, 1, 1, 0.0)
    assert nan["value"] == "nan" and math.isnan(series([nan])["loss"][0][1])
    for bad in ({"": 1.0}, {3: 1.0}, {"loss": "high"}, {"loss": None}, {"ok": True}):
        with pytest.raises(UsageError, match="track.metrics"):
            metric_records(bad, 1, 1, 0.0)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="track.metrics"):
        metric_records([("loss", 1.0)], 1, 1, 0.0)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="track.params"):
        mapping_record("params", {"": 1}, 1, 0.0)


def test_a_torn_last_line_is_skipped() -> None:
    lines = [line(r) for r in metric_records({"a": 1.0, "b": 2.0}, 1, 1, 0.0)]
    assert len(parse([*lines, lines[0][:9]])) == 2


def test_the_later_attempt_wins_a_step_it_redid() -> None:
    first = [r for s in range(1, 36) for r in metric_records({"loss": 1.0 / s}, s, 1, 0.0)]
    second = [r for s in range(31, 41) for r in metric_records({"loss": 2.0 / s}, s, 2, 0.0)]
    every = series(first + second)["loss"]
    assert len(every) == 45 and {a for s, _, a in every if s in range(31, 36)} == {1, 2}
    curve = merged(first + second)["loss"]
    assert [s for s, _ in curve] == list(range(1, 41))  # every step once
    assert dict(curve)[33] == 2.0 / 33 and dict(curve)[30] == 1.0 / 30


@given(
    st.lists(st.tuples(st.integers(1, 3), st.integers(0, 50), st.floats(-1e6, 1e6)), max_size=60)
)
def test_merged_is_one_value_a_step_the_latest_attempt_s(
    logged: list[tuple[int, int, float]],
) -> None:
    records = [r for a, s, v in logged for r in metric_records({"m": v}, s, a, 0.0)]
    curve = merged(records).get("m", [])
    steps = [s for s, _ in curve]
    assert steps == sorted(set(steps)) == sorted({s for _, s, _ in logged})
    for step, value in curve:
        at = [(a, v) for a, s, v in logged if s == step]
        latest = max(a for a, _ in at)
        assert value == [v for a, v in at if a == latest][-1]


@pytest.mark.parametrize(
    ("model_dir", "expected"),
    [
        ("gs://b/job-7/model/", "gs://b/job-7/tracking/r"),
        ("gs://b/models/v3", "gs://b/models/tracking/r"),
        ("/gcs/b/job/model/", "/gcs/b/job/tracking/r"),
        ("/work/out/model", "/work/out/tracking/r"),
        ("vtrain-output/runs/x/model/", "vtrain-output/runs/x/tracking/r"),
        ("model/", "./tracking/r"),
    ],
)
def test_the_run_s_folder_is_beside_the_model_s(model_dir: str, expected: str) -> None:
    from vtrain.track.identity import run_folder

    assert run_folder(model_dir, "r") == expected


@pytest.mark.parametrize("model_dir", ["gs://b/", "gs://b", "/gcs/b/", "/model/", "/", ""])
def test_a_model_folder_without_a_parent_is_refused(model_dir: str) -> None:
    from vtrain.errors import ConfigError
    from vtrain.track.identity import run_folder

    with pytest.raises(ConfigError, match="AIP_MODEL_DIR"):
        run_folder(model_dir, "r")


@pytest.mark.parametrize("step", ["5", 1.5, True, -1, 2**63, None])
def test_a_bad_step_is_refused(step: object) -> None:
    with pytest.raises(UsageError, match=r"track.metrics\(step=\)"):
        metric_records({"loss": 1.0}, step, 1, 0.0)  # type: ignore[arg-type]


def test_a_secret_looking_param_is_hidden() -> None:
    from vtrain.redact import HIDDEN

    record = mapping_record("params", {"hf_token": "hf_abc", "lr": 0.1, "password": "x"}, 1, 0.0)
    assert record["values"] == {"hf_token": HIDDEN, "lr": "0.1", "password": HIDDEN}


def test_numbers_keeps_what_converts_to_a_float() -> None:
    from vtrain.track.records import numbers

    assert numbers({"loss": 1, "acc": 0.5, "flag": True, "text": "x", "list": [1], 3: 2.0}) == {
        "loss": 1.0,
        "acc": 0.5,
    }
