"""The watchdog's bound, as a table: the facts of a trainer's progress in, stuck or not out."""

from __future__ import annotations

import pytest

from vtrain.errors import ConfigError
from vtrain.progress.bound import (
    FIRST_STEP,
    FLOOR,
    MULTIPLE,
    PLATFORM,
    STUCK_EXIT,
    WATCHDOG,
    Facts,
    Settings,
    bound,
    stuck,
    stuck_said,
)

S = Settings(on=True, floor=20.0, multiple=10.0, first_step=120.0)

# (facts, stuck?, the words of the bound it went by)
ROWS = [
    # Before any progress: the first-step allowance, from the watch's start.
    (Facts(now=119.0, started=0.0), False, "first-step"),
    (Facts(now=121.0, started=0.0, still=10.0), True, "first-step"),
    # Past it with no step marked, but moving (a loop that marks nothing): not judged.
    (Facts(now=500.0, started=0.0, still=9.0), False, "first-step"),
    # One or two marks: still the allowance (a first compile), from the last mark.
    (Facts(now=200.0, started=0.0, last=100.0, marks=1), False, "first-step"),
    (Facts(now=221.0, started=0.0, last=100.0, marks=2, times=(90.0,)), True, "first-step"),
    # Steady steps of 0.2 s: the floor (10 x 0.2 = 2 s is under it).
    (Facts(now=119.0, started=0.0, last=100.0, marks=50, times=(0.2,) * 49), False, "floor"),
    (Facts(now=121.0, started=0.0, last=100.0, marks=50, times=(0.2,) * 49), True, "floor"),
    # Slow steps of 5 s: 10 x the median (50 s), past the floor.
    (Facts(now=149.0, started=0.0, last=100.0, marks=9, times=(5.0,) * 8), False, "median"),
    (Facts(now=151.0, started=0.0, last=100.0, marks=9, times=(5.0,) * 8), True, "median"),
    # The median, not the mean: one slow step (a commit the loop waited for) moves nothing.
    (
        Facts(now=125.0, started=0.0, last=100.0, marks=9, times=(0.2,) * 7 + (300.0,)),
        True,
        "floor",
    ),
    # Only the recent step times count: an early slow phase is forgotten.
    (
        Facts(now=125.0, started=0.0, last=100.0, marks=99, times=(60.0,) * 40 + (0.1,) * 40),
        True,
        "floor",
    ),
    # handle.long(...): its seconds from its start, when they reach further.
    (
        Facts(
            now=500.0,
            started=0.0,
            last=100.0,
            marks=50,
            times=(0.2,) * 49,
            long_since=110.0,
            long_for=600.0,
        ),
        False,
        "handle.long",
    ),
    (
        Facts(
            now=711.0,
            started=0.0,
            last=100.0,
            marks=50,
            times=(0.2,) * 49,
            long_since=110.0,
            long_for=600.0,
        ),
        True,
        "handle.long",
    ),
    # A short handle.long does not shorten the bound.
    (
        Facts(
            now=119.0,
            started=0.0,
            last=100.0,
            marks=50,
            times=(0.2,) * 49,
            long_since=100.0,
            long_for=1.0,
        ),
        False,
        "floor",
    ),
]


@pytest.mark.parametrize(("facts", "expected", "words"), ROWS)
def test_stuck_by_the_bound(facts: Facts, expected: bool, words: str) -> None:
    found = stuck(facts, S)
    assert (found is not None) == expected
    assert words in bound(facts, S)[2]
    if found is not None:
        assert found.silent > found.bound


def test_the_settings_from_the_environment() -> None:
    assert Settings.from_env({}, launched=True) == PLATFORM
    assert not Settings.from_env({}, launched=False).on
    assert Settings.from_env({WATCHDOG: "on"}, launched=False).on
    assert not Settings.from_env({WATCHDOG: "OFF"}, launched=True).on
    given = Settings.from_env({FLOOR: "15", MULTIPLE: "4", FIRST_STEP: "60"}, launched=True)
    assert (given.floor, given.multiple, given.first_step) == (15.0, 4.0, 60.0)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (WATCHDOG, "maybe"),
        (FLOOR, "soon"),
        (FLOOR, "0"),
        (FLOOR, "-3"),
        (FLOOR, "inf"),
        (FLOOR, "nan"),
        (MULTIPLE, "1"),
        (MULTIPLE, "0.5"),
        (FIRST_STEP, ""),
    ],
)
def test_a_bad_setting_names_its_variable(name: str, value: str) -> None:
    if not value:
        assert Settings.from_env({name: value}, launched=True) == PLATFORM  # unset: default
        return
    with pytest.raises(ConfigError, match=name):
        Settings.from_env({name: value}, launched=True)


@pytest.mark.parametrize(
    ("code", "tail", "said"),
    [
        (
            STUCK_EXIT,
            [
                b"x",
                b"vtrain: stuck: no progress for 21 s after step 40, waiting for the kvstore "
                b"(bound: the floor of 20 s); every thread's stack follows",
                b"Thread 0x1 (most recent call first):",
            ],
            "no progress for 21 s after step 40, waiting for the kvstore",
        ),
        (
            STUCK_EXIT,
            [b"[rank0]: vtrain: stuck: no progress for 9 s (bound: x)"],
            "no progress for 9 s",
        ),
        (STUCK_EXIT, [b"exit 75 of a script of its own"], None),
        (1, [b"vtrain: stuck: no progress for 9 s (bound: x)"], None),
    ],
)
def test_what_the_watchdog_said(code: int, tail: list[bytes], said: str | None) -> None:
    assert stuck_said(code, tail) == said


@pytest.mark.parametrize("how", ["killed by its signal", "its exit timer (PID 1)"])
def test_the_backstop_s_end_is_said_too(how: str) -> None:
    from vtrain.progress.bound import BACKSTOP_EXIT, BACKSTOP_SIGNAL

    said = stuck_said(-BACKSTOP_SIGNAL if how.startswith("killed") else BACKSTOP_EXIT, [])
    assert said is not None and "holds the GIL" in said
