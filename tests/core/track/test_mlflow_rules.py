"""How a run's records appear in MLflow across attempts (tables of the pure rules)."""

from __future__ import annotations

import pytest

from vtrain.track.mlflow_rules import metric_name, param_updates, run_filter


@pytest.mark.parametrize(
    ("step", "attempt", "earlier", "expected"),
    [
        (5, 1, None, "loss"),  # the first attempt writes the series
        (5, 1, 9, "loss"),  # ... whatever the run holds (its own earlier batches)
        (31, 2, 30, "loss"),  # past what earlier attempts logged: the series goes on
        (30, 2, 30, "loss/attempt-2"),  # redone: the attempt's own name
        (21, 2, 30, "loss/attempt-2"),
        (21, 3, 30, "loss/attempt-3"),
        (21, 2, None, "loss"),  # no earlier attempt logged it
    ],
)
def test_a_redone_step_is_written_under_the_attempt_that_redid_it(
    step: int, attempt: int, earlier: int | None, expected: str
) -> None:
    assert metric_name("loss", step, attempt, earlier) == expected


@pytest.mark.parametrize(
    ("existing", "new", "expected"),
    [
        ({}, {"lr": "0.1"}, {"lr": "0.1"}),
        ({"lr": "0.1"}, {"lr": "0.1"}, {}),  # the same again: nothing to log
        ({"lr": "0.1"}, {"lr": "0.2", "bs": "8"}, {"lr/attempt-2": "0.2", "bs": "8"}),
    ],
)
def test_a_changed_param_is_kept_under_the_attempt(
    existing: dict[str, str], new: dict[str, str], expected: dict[str, str]
) -> None:
    assert param_updates(existing, new, 2) == expected


def test_a_run_is_found_by_its_tag() -> None:
    assert run_filter("job-1-trial-3") == "tags.`vtrain.run` = 'job-1-trial-3'"
