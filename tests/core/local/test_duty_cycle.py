"""--slow and --kill …:STOP, without processes: the duty cycle's signals, and the parsing."""

from __future__ import annotations

import signal

import pytest

from vtrain.errors import UsageError
from vtrain.local import Plan
from vtrain.local.duty_cycle import PERIOD, DutyCycles
from vtrain.local.faults import Kill, Slow, announce, sigkill_after


def test_a_slowed_replica_runs_a_third_of_each_period() -> None:
    cycles = DutyCycles([Slow("worker", 0, 10.0, 3.0)])
    assert cycles.next(100.0) == 110.0
    assert cycles.due(109.9, 100.0) == ([], [])
    begun, sent = cycles.due(110.0, 100.0)
    assert begun == [Slow("worker", 0, 10.0, 3.0)] and sent == []
    t, running, stopped = 110.0, 0.0, 0.0
    for _ in range(30):  # follow its switches: the time it runs is a third of the time
        nxt = cycles.next(100.0)
        assert nxt is not None
        [(name, sig)] = cycles.due(nxt, 100.0)[1]
        assert name == "worker-0"
        if sig == signal.SIGSTOP:
            running += nxt - t
            assert cycles.held() == ["worker-0"]
        else:
            assert sig == signal.SIGCONT
            stopped += nxt - t
            assert cycles.held() == []
        t = nxt
    assert running / (running + stopped) == pytest.approx(1 / 3, abs=0.02)
    assert running + stopped == pytest.approx(15 * PERIOD, rel=0.05)


def test_a_restarted_slow_replica_starts_running_and_stays_slow() -> None:
    cycles = DutyCycles([Slow("chief", 0, 0.0, 4.0)])
    cycles.due(0.0, 0.0)
    cycles.due(cycles.next(0.0) or 0.0, 0.0)  # stopped
    assert cycles.held() == ["chief-0"]
    cycles.started("chief-0", 5.0)  # a new run: not stopped, and its cycle goes on
    assert cycles.held() == []
    assert cycles.next(0.0) == pytest.approx(5.0 + PERIOD / 4)


def test_nothing_slowed_nothing_due() -> None:
    cycles = DutyCycles([])
    assert cycles.next(0.0) is None and cycles.due(99.0, 0.0) == ([], [])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("worker:0@10:3", Slow("worker", 0, 10.0, 3.0)),
        ("chief:0@0:1.5", Slow("chief", 0, 0.0, 1.5)),
        ("ps:2@2.5:100", Slow("ps", 2, 2.5, 100.0)),
    ],
)
def test_slow_parses(text: str, expected: Slow) -> None:
    assert Slow.parse(text) == expected
    assert Slow.parse(str(expected)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "worker:0@10",
        "worker:0@10:1",
        "worker:0@10:0.5",
        "worker:0@10:x",
        "worker:0@10:101",
        "boss:0@1:3",
        "worker@1:3",
        ":3",
        "worker:0@-1:3",
        "worker:0@10:nan",
        "worker:0@10:inf",
    ],
)
def test_slow_refuses(text: str) -> None:
    with pytest.raises(UsageError, match="--slow"):
        Slow.parse(text)


def test_a_frozen_replica_gets_no_sigkill_after_it() -> None:
    kill = Kill.parse("worker:0@12:STOP")
    assert kill.signal == signal.SIGSTOP
    assert sigkill_after(kill, 5.0) is None
    assert "stays frozen" in announce(kill) and "watchdogs" in announce(kill)
    assert sigkill_after(Kill.parse("worker:0@12:TERM"), 5.0) == 30.0


def test_the_plan_checks_slows_with_the_kills() -> None:
    plan = Plan.from_options(
        ["python", "t.py"], workers=1, slows=["worker:0@10:3", "chief:0@5:2"], kills=["chief:0@1"]
    )
    assert [str(s) for s in plan.slows] == ["chief:0@5:2", "worker:0@10:3"]
    with pytest.raises(UsageError, match=r"--slow.*no such replica|no such replica.*--slow"):
        Plan.from_options(["python", "t.py"], workers=1, slows=["worker:1@10:3"])


def test_slow_takes_no_signal() -> None:
    with pytest.raises(UsageError, match="--slow"):
        Slow.parse("worker:0@10:TERM:3")
