"""The `resume` check's evidence: which steps a restart committed, and whether its numbered
files went back; tables of facts, then the check over real folders of markers and files.

The real rehearsals are in test_local_verdict.py (`resume` mode) and the corpus
(corpus/resume-*.py: a loop that never resumes and logs `training step 1/40`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vtrain.local.checks.resume import resume, steps_named, unclaimed, went_back
from vtrain.local.evidence import Evidence, Run

S1, S5 = "step-000000000001", "step-000000000005"


@pytest.mark.parametrize(
    ("paths", "steps"),
    [
        ([f"{S1}/COMMIT.json"], {1}),
        ([f"{S1}"], {1}),  # the folder renamed into place
        ([f".tmp-{S5}-a1b2c3/data-0123456789abcdef/model.pt"], {5}),  # a save in progress
        ([f"trial-3/{S5}/COMMIT.json"], {5}),  # a trial's subfolder
        (["step-1/COMMIT.json", "ckpt-5.pt", "step-0000000000001/x"], set()),  # not 12 digits
        (["a/b/c/step-000000000007/COMMIT.json"], set()),  # too deep to be the layout
        ([], set()),
    ],
)
def test_the_steps_a_run_s_writes_name(paths: list[str], steps: set[int]) -> None:
    assert steps_named(paths) == steps


@pytest.mark.parametrize(
    ("starts", "markers", "claimed", "expected"),
    [
        # A marker written after the restart started is its commit.
        ([10.0], [(1, 11.0)], set(), [{1}]),
        # One written before it started belongs to an earlier run.
        ([10.0], [(5, 9.0)], set(), [set()]),
        # A run's writes named the step (the watcher saw who wrote it): no guess.
        ([10.0, 10.0], [(1, 11.0)], {1}, [set(), set()]),
        # Nobody named: the first in order (the leader's newest run) that had started.
        ([10.0, 10.0], [(1, 11.0)], set(), [{1}, set()]),
        ([12.0, 10.0], [(1, 11.0)], set(), [set(), {1}]),
        ([], [(1, 11.0)], set(), []),
    ],
)
def test_the_commits_no_write_names_go_to_the_restart_alive_then(
    starts: list[float],
    markers: list[tuple[int, float]],
    claimed: set[int],
    expected: list[set[int]],
) -> None:
    assert unclaimed(starts, markers, claimed) == expected


@pytest.mark.parametrize(
    ("earlier", "later", "expected"),
    [
        (["ckpt-5.pt"], ["ckpt-1.pt"], ("ckpt-1.pt", "ckpt-5.pt")),
        (["ckpt-1.pt", "ckpt-2.pt"], ["ckpt-1.pt"], ("ckpt-1.pt", "ckpt-2.pt")),
        (["epoch-3/model.npy"], ["epoch-1/model.npy"], ("epoch-1/model.npy", "epoch-3/model.npy")),
        (["ckpt-0005.npy"], ["ckpt-0002.npy"], ("ckpt-0002.npy", "ckpt-0005.npy")),
        # Went on: a newer number, or the same rolling file written again.
        (["ckpt-5.pt"], ["ckpt-6.pt"], None),
        (["latest.pt", "ckpt-5.pt"], ["latest.pt", "ckpt-6.pt"], None),
        (["model_v2.pt"], ["model_v2.pt"], None),
        (["ckpt-5.pt"], ["ckpt-5.pt"], None),
        # Other names are no evidence: a config written at every start, another series.
        (["config.json", "ckpt-5.pt"], ["config.json", "opt-1.pt"], None),
        ([], ["ckpt-1.pt"], None),
    ],
)
def test_a_numbered_file_older_than_one_there_before(
    earlier: list[str], later: list[str], expected: tuple[str, str] | None
) -> None:
    assert went_back(earlier, later) == expected


@given(st.lists(st.integers(0, 10**6), min_size=1), st.integers(0, 10**6))
def test_a_restart_goes_back_exactly_when_its_number_is_below_the_newest(
    before: list[int], written: int
) -> None:
    earlier = [f"ckpt-{n}.npy" for n in before]
    found = went_back(earlier, [f"ckpt-{written}.npy"])
    assert (found is not None) == (written < max(before))


def _evidence(tmp_path: Path, restart: float, committed: int) -> tuple[Evidence, Path]:
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    ev = Evidence(
        {"chief-0": "127.0.0.2"}, {}, True, str(tmp_path / "model"), str(folder), {}, None
    )
    first = Run("chief-0", 0, None, str(tmp_path / "run-0.record"), None)
    first.started = restart - 100
    again = Run("chief-0", 1, None, str(tmp_path / "run-1.record"), "chief:0@2:KILL")
    again.started, again.committed = restart, committed
    ev.runs += [first, again]
    for run in ev.runs:
        Path(run.record).touch()  # the probe's, empty: it saw no Python write
    return ev, folder


def _marker(folder: Path, step: int, mtime: float) -> None:
    path = folder / f"step-{step:012d}" / "COMMIT.json"
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    os.utime(path, (mtime, mtime))


def test_a_restart_that_commits_its_first_step_again_is_a_finding(tmp_path: Path) -> None:
    now = time.time()
    ev, folder = _evidence(tmp_path, now, committed=5)
    _marker(folder, 5, now - 50)  # the first run's
    _marker(folder, 1, now + 1)  # the restart's: it started over
    (finding,) = resume(ev)
    assert (finding.check, finding.replica) == ("resume", "chief-0")
    assert "committed step 1 although step 5 was committed when it started" in finding.detail
    assert "handle.resume(model, optimizer)" in finding.fix


def test_a_peer_s_commit_of_the_newest_step_as_it_started_is_not(tmp_path: Path) -> None:
    now = time.time()
    ev, folder = _evidence(tmp_path, now, committed=5)
    _marker(folder, 5, now + 0.001)  # committed by the leader as this run's folder was read
    assert resume(ev) == []
    ev.runs[1].seen = [("write", str(folder / S5 / "COMMIT.json"))]  # but this run wrote it
    (finding,) = resume(ev)
    assert "committed step 5 although step 5" in finding.detail


def test_a_restart_that_goes_on_is_not(tmp_path: Path) -> None:
    now = time.time()
    ev, folder = _evidence(tmp_path, now, committed=5)
    _marker(folder, 5, now - 50)
    _marker(folder, 6, now + 1)
    assert resume(ev) == []


def test_numbered_files_written_again_from_the_first_are_a_finding(tmp_path: Path) -> None:
    now = time.time()
    ev, folder = _evidence(tmp_path, now, committed=-1)
    first, again = ev.runs
    first.seen = [("write", str(folder / f"ckpt-{n}.npy")) for n in range(1, 6)]
    again.seen = [("write", str(folder / "ckpt-1.npy"))]
    (finding,) = resume(ev)
    assert "wrote ckpt-1.npy after ckpt-5.npy was there" in finding.detail
    again.seen = [("write", str(folder / "ckpt-6.npy"))]
    assert resume(ev) == []


def test_files_older_than_the_restart_count_without_the_watcher(tmp_path: Path) -> None:
    now = time.time()
    ev, folder = _evidence(tmp_path, now, committed=-1)
    (folder / "ckpt-9.npy").write_bytes(b"")
    os.utime(folder / "ckpt-9.npy", (now - 50, now - 50))
    ev.runs[1].seen = [("write", str(folder / "ckpt-2.npy"))]
    (finding,) = resume(ev)
    assert "wrote ckpt-2.npy after ckpt-9.npy was there" in finding.detail
