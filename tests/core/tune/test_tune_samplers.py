"""Samplers: grid order, random draws in their scale, optuna's model-based search."""

from __future__ import annotations

import sys

import pytest

from vtrain.errors import MissingExtraError
from vtrain.tune.samplers import GridSampler, OptunaSampler, RandomSampler
from vtrain.tune.study import Metric, Parameter, Study


def make(*parameters: Parameter, algorithm: str = "RANDOM_SEARCH") -> Study:
    return Study(Metric("score", "MAXIMIZE"), parameters, algorithm, max_trial_count=10)


def test_grid_enumerates_every_point_last_parameter_fastest() -> None:
    sampler = GridSampler(
        make(
            Parameter("n", "INTEGER", 1, 3),
            Parameter("opt", "CATEGORICAL", values=("adam", "sgd")),
            algorithm="GRID_SEARCH",
        )
    )
    points = [sampler.suggest(i) for i in range(1, 8)]
    assert points == [
        {"n": 1, "opt": "adam"},
        {"n": 1, "opt": "sgd"},
        {"n": 2, "opt": "adam"},
        {"n": 2, "opt": "sgd"},
        {"n": 3, "opt": "adam"},
        {"n": 3, "opt": "sgd"},
        None,
    ]


def draws(p: Parameter, n: int = 400, seed: int = 0) -> list[float]:
    sampler = RandomSampler(make(p), seed)
    return [float(sampler.suggest(i)[p.parameter_id]) for i in range(1, n + 1)]  # type: ignore[index]


def test_random_draws_depend_only_on_seed_and_trial_number() -> None:
    p = Parameter("x", "DOUBLE", 0.0, 1.0)
    a, b = RandomSampler(make(p), 5), RandomSampler(make(p), 5)
    assert [a.suggest(i) for i in (3, 1, 2)] == [b.suggest(i) for i in (3, 1, 2)]
    assert RandomSampler(make(p), 6).suggest(1) != a.suggest(1)


@pytest.mark.parametrize(
    ("scale", "low_share"),
    # Share of draws in the bottom tenth of [0.001, 1]: about 0.1 on a linear scale,
    # 2/3 on a log scale (0.1 is a third of the way down in log), almost none in reverse.
    [("LINEAR", (0.05, 0.15)), ("LOG", (0.6, 0.73)), ("REVERSE_LOG", (0.0, 0.02))],
)
def test_double_scales(scale: str, low_share: tuple[float, float]) -> None:
    values = draws(Parameter("x", "DOUBLE", 0.001, 1.0, scale=scale))
    assert all(0.001 <= v <= 1.0 for v in values)
    share = sum(v < 0.1 for v in values) / len(values)
    assert low_share[0] <= share <= low_share[1]


@pytest.mark.parametrize("scale", ["LINEAR", "LOG", "REVERSE_LOG"])
def test_integers_reach_both_ends(scale: str) -> None:
    values = draws(Parameter("n", "INTEGER", 1, 4, scale=scale))
    assert set(values) == {1, 2, 3, 4}


def test_discrete_and_categorical_draw_from_their_values() -> None:
    assert set(draws(Parameter("b", "DISCRETE", values=(16, 32, 64)), 60)) == {16, 32, 64}


def test_optuna_stays_in_bounds_and_learns_from_replayed_trials() -> None:
    pytest.importorskip("optuna")
    study = make(
        Parameter("x", "DOUBLE", 0.001, 1.0, scale="REVERSE_LOG"),
        Parameter("n", "INTEGER", 1, 8, scale="LOG"),
        Parameter("opt", "CATEGORICAL", values=("adam", "sgd")),
        algorithm="ALGORITHM_UNSPECIFIED",
    )
    first = OptunaSampler(study, seed=1)
    finished = []
    for i in range(1, 5):
        point = first.suggest(i)
        assert point is not None
        assert (
            0.001 <= float(point["x"]) <= 1.0
            and 1 <= int(point["n"]) <= 8
            and point["opt"] in ("adam", "sgd")
        )
        value = None if i == 2 else -((float(point["x"]) - 0.3) ** 2)
        first.observe(i, point, value)
        finished.append((i, point, value))
    resumed = OptunaSampler(study, seed=1)
    for i, point, value in finished:
        resumed.observe(i, point, value)
    trials = resumed.study.trials
    assert [t.state.name for t in trials] == ["COMPLETE", "FAIL", "COMPLETE", "COMPLETE"]
    assert [t.params["x"] for t in trials] == pytest.approx(
        [1.001 - float(p["x"]) for _, p, _ in finished]
    )
    assert resumed.suggest(5) is not None


def test_model_based_search_without_optuna_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)
    study = make(Parameter("x", "DOUBLE", 0.0, 1.0), algorithm="ALGORITHM_UNSPECIFIED")
    with pytest.raises(
        MissingExtraError, match=r"'optuna', needed for the model-based search .*vtrain\[tune\]"
    ):
        OptunaSampler(study, seed=0)
