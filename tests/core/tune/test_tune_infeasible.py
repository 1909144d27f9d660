"""A trial whose metric is not a finite number is INFEASIBLE: never best, and study.json stays JSON.

`report()` refuses such values (tests/core/hypertune/test_hypertune_finite.py),
but another tool, or cloudml-hypertune, can write "nan" into a trial's metric
file, and an older vtrain wrote a bare NaN into study.json.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st
from tune_helpers import study

from vtrain.cli import main
from vtrain.tune.results import INFEASIBLE, SUCCEEDED, Trial, read_trials, write_results
from vtrain.tune.runner import StudyRunner, _Running
from vtrain.tune.study_file import study_from_document
from vtrain.tune.table import results_table

TAG = "score"
# What lands in a metric file's value: the strings cloudml-hypertune writes, JSON numbers,
# the NaN/Infinity constants json.dumps allows, and ints beyond float's range.
written = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["nan", "-inf", "Infinity", "1e400", "-1e999"]),
    st.integers(300, 2000).map(lambda digits: 10**digits),
    st.integers(-(10**6), 10**6),
)


def _refuse(constant: str) -> None:
    raise AssertionError(f"study.json holds {constant}, which is not JSON")


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> StudyRunner:
    """A runner of a MINIMIZE study, for trials that are finished by hand."""
    document = study(metrics=[{"metric_id": TAG, "goal": "MINIMIZE"}])
    return StudyRunner(
        study_from_document(document), ["true"], str(tmp_path_factory.mktemp("study"))
    )


@pytest.fixture(scope="module")
def exited() -> subprocess.Popen[bytes]:
    """A process that has exited 0: what a finished trial looks like to the runner."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process


@examples(200)
@given(reports=st.lists(st.lists(written, min_size=1, max_size=4), min_size=1, max_size=4))
def test_a_non_finite_metric_is_infeasible_and_never_best(
    runner: StudyRunner, exited: subprocess.Popen[bytes], reports: list[list[Any]]
) -> None:
    runner.trials = {}
    metric_file = Path(runner.output_dir) / "metrics"
    for number, values in enumerate(reports, start=1):
        lines = [json.dumps({TAG: v, "global_step": "1", "trial": str(number)}) for v in values]
        metric_file.write_text("\n".join(lines) + "\n")
        trial = Trial(str(number), {"x": 0.5}, "ACTIVE")
        finished = runner._finish(_Running(trial, exited, str(metric_file)))
        if all(_finite(v) for v in values):
            assert finished.status == SUCCEEDED
            assert finished.final_metric == float(values[-1])  # LAST_MEASUREMENT
        else:
            assert finished.status == INFEASIBLE
            assert finished.final_metric is None
            assert "not a finite number" in finished.reason
    best = runner.best()
    feasible = [n for n, values in enumerate(reports, start=1) if all(map(_finite, values))]
    if feasible:
        assert best is not None and best.final_metric is not None
        assert math.isfinite(best.final_metric)
        assert best.final_metric == min(float(reports[n - 1][-1]) for n in feasible)
    else:
        assert best is None
    saved = json.loads((Path(runner.output_dir) / "study.json").read_text(), parse_constant=_refuse)
    assert saved["best_trial"] == (None if best is None else best.trial_id)
    table = results_table(runner.study, runner._ordered())
    assert table.count(INFEASIBLE) == len(reports) - len(feasible)


@examples(200)
@given(metrics=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=5))
def test_an_earlier_study_json_with_nan_is_read_as_infeasible(
    runner: StudyRunner, metrics: list[float]
) -> None:
    # What vtrain wrote before: NaN recorded as a success, in a file that is not JSON.
    trials = [
        Trial(str(n), {"x": 0.5}, SUCCEEDED, final_metric=m) for n, m in enumerate(metrics, 1)
    ]
    document = {"study": runner.study.to_dict(), "trials": [t.__dict__ for t in trials]}
    path = Path(runner.output_dir) / "old-study.json"
    path.write_text(json.dumps(document))
    read = read_trials(str(path), runner.study)
    for t, m in zip(read.values(), metrics, strict=True):
        assert (t.status, t.final_metric) == (
            (SUCCEEDED, m) if math.isfinite(m) else (INFEASIBLE, None)
        )
    write_results(
        str(path),
        study=runner.study,
        command=["true"],
        seed=0,
        replicas={},
        output_dir="o",
        status="SUCCEEDED",
        reason="",
        trials=list(read.values()),
        best=None,
    )
    json.loads(path.read_text(), parse_constant=_refuse)


WRITER = """
import json, os, sys
x = float(sys.argv[-1].split("=")[1])
value = "nan" if x == 1 else str(x)  # another writer: a string, as cloudml-hypertune writes
path = os.environ["CLOUD_ML_HP_METRIC_FILE"]
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    f.write(json.dumps({"score": value, "global_step": "1", "trial": "1"}) + "\\n")
"""


def test_a_study_with_a_nan_trial_picks_a_finite_best(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = study(
        metrics=[{"metric_id": TAG, "goal": "MINIMIZE"}],
        parameters=[{"parameter_id": "x", "discrete_value_spec": {"values": [1, 2, 3]}}],
        algorithm="GRID_SEARCH",
        max_trial_count=3,
    )
    study_file = tmp_path / "study.json"
    study_file.write_text(json.dumps(document))
    out = tmp_path / "out"
    argv = [
        "tune",
        "--study",
        str(study_file),
        "--output-dir",
        str(out),
        "--",
        sys.executable,
        "-c",
        WRITER,
    ]
    assert main(argv) == 0
    printed = capsys.readouterr()
    results = json.loads((out / "study.json").read_text(), parse_constant=_refuse)
    by_id = {t["trial_id"]: t for t in results["trials"]}
    assert by_id["1"]["status"] == INFEASIBLE and by_id["1"]["final_metric"] is None
    assert results["best_trial"] == "2"
    row = next(line for line in printed.out.splitlines() if line.startswith("1 "))
    assert INFEASIBLE in row
    assert "best trial: 2" in printed.out
    assert "[3/3] trial" in printed.err
