"""Conditional parameters (Vertex's conditional_parameter_specs) in `vtrain tune`: each sampler
searches a child only when its parent's value activates it, and only active parameters reach
the trial as flags."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from tune_helpers import Tune, study

from vtrain.tune.samplers import GridSampler, OptunaSampler, RandomSampler
from vtrain.tune.study_file import parse_study


def flags(record: dict[str, Any]) -> dict[str, str]:
    """The --name=value flags a trial received."""
    return dict(a[2:].split("=", 1) for a in record["argv"] if "=" in a)


def conditional(x_spec: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """--opt adam|sgd, and --x (`x_spec`) only for sgd; --y 0..1 for both."""
    return study(
        parameters=[
            {
                "parameter_id": "opt",
                "categorical_value_spec": {"values": ["adam", "sgd"]},
                "conditional_parameter_specs": [
                    {
                        "parent_categorical_values": {"values": ["sgd"]},
                        "parameter_spec": {"parameter_id": "x", **x_spec},
                    }
                ],
            },
            {"parameter_id": "y", "integer_value_spec": {"min_value": 0, "max_value": 1}},
        ],
        **fields,
    )


def only_active(run_flags: dict[str, str]) -> bool:
    return ("x" in run_flags) == (run_flags["opt"] == "sgd")


def test_grid_search_runs_each_branch_of_the_tree_once(tune: Tune) -> None:
    document = conditional(
        {"discrete_value_spec": {"values": [0.2, 0.4]}},
        algorithm="GRID_SEARCH",
        max_trial_count=20,
        parallel_trial_count=3,
    )
    run = tune(document)
    assert run.status == 0, run.err
    seen = sorted(tuple(sorted(flags(r).items())) for r in run.records())
    adam = [(("opt", "adam"), ("y", y)) for y in "01"]
    sgd = [(("opt", "sgd"), ("x", x), ("y", y)) for x, y in itertools.product(["0.2", "0.4"], "01")]
    assert seen == sorted(adam + sgd)  # 2 + 2 * 2: not the 2 * 2 * 2 of a flat product
    assert len(run.trials) == 6
    # The table has a column for x; the trials without it show "-" there.
    header, *rows = run.out.splitlines()[:7]
    assert header.split()[:4] == ["trial", "opt", "x", "y"]
    assert all(row.split()[2] == "-" for row in rows if row.split()[1] == "adam")


def test_random_search_draws_a_child_only_under_its_parent_value(tune: Tune) -> None:
    document = conditional(
        {"double_value_spec": {"min_value": 0, "max_value": 1}},
        max_trial_count=12,
        parallel_trial_count=4,
    )
    run = tune(document, cli=("--seed", "5"))
    assert run.status == 0, run.err
    given = [flags(r) for r in run.records()]
    assert len(given) == 12
    assert all(only_active(f) for f in given), given
    assert {f["opt"] for f in given} == {"adam", "sgd"}
    assert all(("x" in t["parameters"]) == (t["parameters"]["opt"] == "sgd") for t in run.trials)


def test_model_based_search_with_conditions_runs_and_resumes(tune: Tune) -> None:
    pytest.importorskip("optuna")
    document = conditional(
        {"double_value_spec": {"min_value": 0.01, "max_value": 1}, "scale_type": "UNIT_LOG_SCALE"},
        algorithm="ALGORITHM_UNSPECIFIED",
        max_trial_count=4,
        parallel_trial_count=2,
    )
    assert tune(document).status == 0
    # The resumed study replays the finished trials, each with its own active parameters.
    run = tune({**document, "max_trial_count": 8})
    assert run.status == 0, run.err
    assert sorted(r["trial"] for r in run.records()) == [str(n) for n in range(1, 9)]
    assert all(only_active(flags(r)) for r in run.records())
    assert all(0.01 <= t["parameters"].get("x", 0.5) <= 1 for t in run.trials)


TREE = {
    "metrics": [{"metric_id": "m", "goal": "MAXIMIZE"}],
    "algorithm": "GRID_SEARCH",
    "max_trial_count": 10,
    "parameters": [
        {
            "parameter_id": "layers",
            # 2**40 values; two of them activate a child, one of which has a child of its own.
            "integer_value_spec": {"min_value": 0, "max_value": 2**40 - 1},
            "conditional_parameter_specs": [
                {
                    "parent_int_values": {"values": [7, 2**39]},
                    "parameter_spec": {
                        "parameter_id": "width",
                        "discrete_value_spec": {"values": [16, 32]},
                        "conditional_parameter_specs": [
                            {
                                "parent_discrete_values": {"values": [32]},
                                "parameter_spec": {
                                    "parameter_id": "act",
                                    "categorical_value_spec": {"values": ["relu", "tanh"]},
                                },
                            }
                        ],
                    },
                }
            ],
        }
    ],
}


def test_the_grid_of_a_tree_is_indexed_not_walked() -> None:
    grid = GridSampler(parse_study(json.dumps(TREE), yaml=False))
    # 2**40 - 2 plain values, and 3 points (16; 32 relu; 32 tanh) under each of 7 and 2**39.
    assert grid.size == 2**40 - 2 + 2 * 3
    assert [grid.suggest(n) for n in range(7, 12)] == [
        {"layers": 6},
        {"layers": 7, "width": 16},
        {"layers": 7, "width": 32, "act": "relu"},
        {"layers": 7, "width": 32, "act": "tanh"},
        {"layers": 8},
    ]
    assert grid.suggest(grid.size) == {"layers": 2**40 - 1}
    # 2**39 values before the second block, 2 more points for the first block's children.
    assert grid.suggest(2**39 + 3) == {"layers": 2**39, "width": 16}
    assert grid.suggest(2**39 + 5) == {"layers": 2**39, "width": 32, "act": "tanh"}
    assert grid.suggest(grid.size + 1) is None


def test_a_study_without_conditions_draws_what_it_always_drew() -> None:
    # Trial n's parameters are part of a resumable study: conditions must not move them.
    import random

    from vtrain.tune.samplers import sample

    flat = parse_study(json.dumps(study(max_trial_count=5)), yaml=False)
    for n in range(1, 4):
        expected = sample(flat.parameters[0], random.Random(f"0/{n}"))
        assert RandomSampler(flat, 0).suggest(n) == {"x": expected}


def test_optuna_suggests_children_only_when_active() -> None:
    pytest.importorskip("optuna")
    document = conditional({"double_value_spec": {"min_value": 0, "max_value": 1}})
    sampler = OptunaSampler(parse_study(json.dumps(document), yaml=False), seed=1)
    for n in range(1, 11):
        values = sampler.suggest(n)
        assert values is not None
        assert ("x" in values) == (values["opt"] == "sgd"), values
        sampler.observe(n, values, float(n))
