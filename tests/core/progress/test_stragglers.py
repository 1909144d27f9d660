"""The straggler check: a table for `behind`, and the lines from real progress files."""

from __future__ import annotations

from pathlib import Path

import pytest

from vtrain.errors import ConfigError
from vtrain.local.stragglers import AFTER, FRACTION, Stragglers, behind, settings
from vtrain.progress.file import Snapshot, Writer

ROWS = [
    ({}, {}),
    ({"chief-0": 5.0}, {}),  # alone: behind no one
    ({"chief-0": 5.0, "worker-0": 5.0}, {}),
    ({"chief-0": 5.0, "worker-0": 2.0}, {"worker-0": 5.0}),
    ({"chief-0": 5.0, "worker-0": 2.6}, {}),  # above half
    ({"a": 4.0, "b": 4.2, "c": 1.0, "d": 3.8}, {"c": 4.0}),
    ({"a": 0.0, "b": 0.0}, {}),  # stopped peers: no median to fall below
]


@pytest.mark.parametrize(("rates", "expected"), ROWS)
def test_behind(rates: dict[str, float], expected: dict[str, float]) -> None:
    found = behind(rates, 0.5)
    assert found.keys() == expected.keys()
    for name, median in expected.items():
        assert found[name] == pytest.approx(median)


def test_settings() -> None:
    assert settings({}) == (0.5, 10.0)
    assert settings({FRACTION: "0.3", AFTER: "4"}) == (0.3, 4.0)
    for name, value in ((FRACTION, "1"), (FRACTION, "x"), (AFTER, "0"), (AFTER, "inf")):
        with pytest.raises(ConfigError, match=name):
            settings({name: value})


def test_a_straggler_is_named_once_after_it_stays_behind(tmp_path: Path) -> None:
    files = {n: str(tmp_path / f"{n}.progress") for n in ("chief-0", "worker-0", "worker-1")}
    writers = {n: Writer(p) for n, p in files.items()}

    def rates(**given: float) -> None:
        for name, rate in given.items():
            writers[name.replace("_", "-")].write(
                Snapshot(pid=1, state="training", t=0.0, rate=rate)
            )

    check = Stragglers({AFTER: "5"})
    rates(chief_0=10.0, worker_0=10.0, worker_1=3.0)
    assert check.look(files, 100.0) == []  # behind, not yet for long
    assert check.look(files, 104.0) == []
    [(name, line)] = check.look(files, 105.0)
    assert name == "worker-1"
    assert "3.00 steps/s for 5 s" in line and "median of 10.00" in line
    assert check.look(files, 120.0) == []  # said once
    rates(worker_1=9.0)
    assert check.look(files, 121.0) == []  # caught up
    rates(worker_1=1.0)
    assert check.look(files, 122.0) == []
    assert [n for n, _ in check.look(files, 127.0)] == ["worker-1"]  # behind again: said again
