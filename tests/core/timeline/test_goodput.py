"""Goodput from a job's timeline (tables of records: the pure rules)."""

from __future__ import annotations

from typing import Any

import pytest

from vtrain.timeline.events import lanes, next_attempt, parse
from vtrain.timeline.goodput import goodput, step_time


def steps(first: int, last: int, at: float) -> list[dict[str, Any]]:
    """Step k ends at `at` + k (a second a step): the first one's record, then the others."""
    found = [{"t": at + first, "e": "first_step", "step": first}]
    return found + [{"t": at + k, "e": "step", "step": k} for k in range(first + 1, last + 1)]


def test_one_attempt_is_start_up_then_steps_less_the_commits() -> None:
    lane = [{"t": 0.0, "e": "start"}, {"t": 2.0, "e": "ready"}, *steps(1, 10, 2.0)]
    lane += [{"t": 7.0, "e": "commit", "step": 5, "held": 0.5}, {"t": 12.5, "e": "exit"}]
    found = goodput({("chief-0", 1): lane}, [{"t": 13.0, "e": "job_end"}])
    assert found is not None
    job = found.job
    assert (job.wall, job.startup, job.waiting, job.checkpoints) == (13.0, 2.0, 0.0, 0.5)
    assert job.productive == pytest.approx(9.5)  # steps 1 to 10, a second each, less the commit
    assert job.other == pytest.approx(1.0) and job.lost == job.redone == 0
    assert job.goodput == pytest.approx(9.5 / 13)
    assert found.line().startswith("goodput 73%: 9.5 s of 13.0 s trained; start-up 2.0 s")


def test_a_killed_attempt_loses_the_gap_and_redoes_what_its_commit_did_not_keep() -> None:
    first = [{"t": 0.0, "e": "start"}, {"t": 1.0, "e": "ready"}, *steps(1, 25, 2.0)]  # to t=27
    second = [
        {"t": 28.0, "e": "start"},
        {"t": 29.0, "e": "ready"},
        {"t": 29.5, "e": "resume", "step": 20},
    ]
    second += steps(21, 40, 10.0)  # step 21 ends at 31: it started at 30, 3 s after the failure
    found = goodput({("chief-0", 1): first, ("chief-0", 2): second}, [{"t": 51.0, "e": "job_end"}])
    assert found is not None
    job = found.job
    assert job.lost == pytest.approx(3.0)
    assert job.redone == pytest.approx(5.0)  # steps 21 to 25, trained twice
    assert job.productive == pytest.approx(40.0)  # each of the 40 steps once
    assert job.startup == 1.0 and job.waiting == pytest.approx(1.0)
    total = job.productive + job.startup + job.waiting + job.checkpoints + job.lost + job.redone
    assert total + job.other == pytest.approx(job.wall)


def test_the_leader_is_the_chief_and_a_replica_that_never_trained_has_no_figure() -> None:
    chief = [{"t": 0.0, "e": "start"}, *steps(1, 3, 1.0)]
    ps = [{"t": 0.0, "e": "start"}, {"t": 9.0, "e": "exit"}]
    found = goodput({("worker-0", 1): chief, ("chief-0", 1): chief, ("ps-0", 1): ps})
    assert found is not None and found.leader == "chief-0"
    assert set(found.replicas) == {"chief-0", "worker-0"}
    assert goodput({("ps-0", 1): ps}) is None
    assert goodput({}) is None


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([steps(1, 5, 0.0)], 1.0),
        ([[{"t": 0.0, "e": "step", "step": 2}, {"t": 1.0, "e": "step", "step": 6}]], 0.25),
        ([[{"t": 0.0, "e": "first_step", "step": 1}]], 0.0),  # one record says nothing
    ],
)
def test_step_time_is_the_median_of_the_records(records: Any, expected: float) -> None:
    assert step_time(records) == pytest.approx(expected)


def test_lanes_and_attempts_from_a_folder_listing() -> None:
    names = ["worker-1.1.jsonl", "chief-0.2.jsonl", "launcher.jsonl", "chief-0.1.jsonl", "x.txt"]
    assert lanes(names) == [("chief-0", 1), ("chief-0", 2), ("worker-1", 1)]
    assert next_attempt(names, "chief-0") == 3 and next_attempt(names, "ps-0") == 1


def test_a_torn_last_line_is_skipped() -> None:
    lines = [b'{"t":1.0,"e":"start"}', b'{"t":2.0,"e":"step","step":1}', b'{"t":3.0,"e":"st']
    assert [r["e"] for r in parse(lines)] == ["start", "step"]
