"""The fault matrix for XGBoost: every kill and preemption, under both restart policies.

A chief and a worker train examples/xgboost/train.py (0.1 s a round, through
scripts/ticking.py) under `vtrain local run --kill`. Faults: SIGKILL of the worker
or the chief, SIGTERM of either (a preemption: SIGKILL 30 s later unless it
exits), and SIGKILL of the replica that hosts XGBoost's tracker, which is the chief
(rank 0: `handle.rendezvous`). Policies: the failed replica restarts alone
(Vertex's default) or the whole job does (`--restart-job-on-worker-restart`). Every
cell must finish, resumed from the last commit, with the uninterrupted run's model
(hist, no subsampling: tree for tree). A cell that overruns its timeout fails.

Each cell prints its figures (`pytest -s`); bench/faults.py sets them against the
targets. The representative cell of the default `nox` is test_cluster.py's
test_a_worker_killed_mid_training_resumes_to_the_uninterrupted_model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cluster_run import EXAMPLES
from fault_cells import FAULTS, FREEZES, POLICIES, CellRun, check_frozen, run_cell

pytestmark = [pytest.mark.faults, pytest.mark.filterwarnings("ignore:.*Unknown file format")]

TICKING = str(Path(__file__).parent / "scripts" / "ticking.py")
EVERY = 5
EXAMPLE = [
    TICKING,
    str(EXAMPLES / "xgboost" / "train.py"),
    "--rounds",
    "120",
    "--rows",
    "2000",
    "--nthread",
    "1",
    "--checkpoint-every",
    str(EVERY),
]
START = r"rank \d+/\d+: (\d+) rounds done before"
# The tracker runs in the chief's process: killing its host is killing the chief.
XGB_FAULTS = {**FAULTS, "kill tracker host": FAULTS["kill chief"]}
KILL_AT = 10  # seconds: past the cold start (3 to 6 s) and the first commits, mid-training
TIMEOUT = 150  # a cell takes about 25 s; one that hangs fails here, and is stopped
CELLS = [(fault, policy) for fault in XGB_FAULTS for policy in POLICIES]
XGB_FREEZES = {
    "freeze worker": FREEZES["freeze worker"],
    "freeze tracker host": FREEZES["freeze chief"],
}
FROZEN = [(fault, policy) for fault in XGB_FREEZES for policy in POLICIES]
# A lone restart that finds its peer frozen waits to enter the collective: its first-step
# allowance (120 s in a rehearsal) is cut to 30 s, and one restart is enough to show it.
FROZEN_OPTIONS = ["--max-restarts", "1"]
FROZEN_ENV = {"VTRAIN_FIRST_STEP_SECONDS": "30"}
FROZEN_CHECK = {
    "timeout": TIMEOUT,
    "detect_within": 30.0,  # the watchdog's floor (20 s: a round is 0.1 s), and 10 s
    "every": EVERY,
    "settle_within": 100.0,
}


def cell(out: Path, fault: str | None, policy: str) -> CellRun:
    kill = [] if fault is None else ["--kill", XGB_FAULTS[fault].format(at=KILL_AT)]
    return run_cell(
        out,
        ["--workers", "1", *POLICIES[policy], *kill],
        EXAMPLE,
        start_line=START,
        timeout=TIMEOUT,
        ROUND_DELAY="0.1",
    )


def frozen_cell(out: Path, fault: str, policy: str, **env: str) -> CellRun:
    """The example with a replica frozen (SIGSTOP) mid-training, as a machine that hangs;
    `env` on top of the cells' own (a shorter floor, for the default sessions' cell)."""
    freeze = ["--kill", XGB_FREEZES[fault].format(at=KILL_AT)]
    return run_cell(
        out,
        ["--workers", "1", *FROZEN_OPTIONS, *POLICIES[policy], *freeze],
        EXAMPLE,
        start_line=START,
        timeout=TIMEOUT,
        ROUND_DELAY="0.1",
        **{**FROZEN_ENV, **env},
    )


def final(run: CellRun) -> dict[str, object]:
    """What the chief printed last: rmse, model fingerprint, rounds."""
    lines = [ln for ln in run.output.splitlines() if ln.startswith("chief-0  | final {")]
    assert lines, run.shown()
    return dict(json.loads(lines[-1].split("| final ", 1)[1]))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> CellRun:
    run = cell(tmp_path_factory.mktemp("whole"), None, "replica")
    assert run.returncode == 0, run.output
    return run


@pytest.mark.parametrize(("fault", "policy"), CELLS, ids=[f"{f}-{p}" for f, p in CELLS])
def test_cell_resumes_to_the_uninterrupted_model(
    fault: str, policy: str, uninterrupted: CellRun, tmp_path: Path
) -> None:
    run = cell(tmp_path, fault, policy)
    start = uninterrupted.first_step()
    print(
        f"\nxgboost | {fault} | {policy}: {run.figures()}; "
        f"cold start {'-' if start is None else f'{start:.1f} s'}"
    )
    assert not run.timed_out, f"hung past {TIMEOUT} s:\n{run.shown()}"
    assert run.returncode == 0, run.shown()
    assert run.killed_at is not None and "nothing to kill" not in run.output, run.shown()
    assert len(run.lives["chief-0"]) >= 2, run.shown()  # the chief trained again
    assert final(run) == final(uninterrupted)
    if not run.trained_before_kill():  # nothing to commit yet
        assert run.resumed() == 0 and run.committed_step is None, run.shown()
        return
    assert run.resumed() % EVERY == 0 or fault.startswith("preempt"), run.resumed()
    redone = run.redone()
    assert redone is not None
    if fault.startswith("preempt"):
        # Every trainer stops at the round after the SIGTERM; the leader commits it first.
        assert redone == 0, run.shown()
        assert run.committed_step == run.resumed(), run.shown()
        assert f"preempted (SIGTERM): committed step {run.resumed()}" in run.output
        commit = run.commit()
        assert commit is not None and commit < 30, commit  # within the notice, before SIGKILL
    else:
        # A commit still being written when SIGKILL lands is lost: the one before counts.
        assert redone <= 2 * EVERY, run.shown()


@pytest.mark.parametrize(("fault", "policy"), FROZEN, ids=[f"{f}-{p}" for f, p in FROZEN])
def test_frozen_cell_resumes_or_stops_with_a_reason(
    fault: str, policy: str, uninterrupted: CellRun, tmp_path: Path
) -> None:
    run = frozen_cell(tmp_path, fault, policy)
    print(f"\nxgboost | {fault} | {policy}: {run.figures()}; ended {run.ended():.1f} s after")
    print("\n".join(ln for ln in run.output.splitlines() if ln.startswith("vtrain ")))
    check_frozen(run, policy, **FROZEN_CHECK)
    if policy == "job":
        assert final(run) == final(uninterrupted)
