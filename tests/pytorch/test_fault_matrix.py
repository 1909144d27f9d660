"""The fault matrix for PyTorch DDP and Lightning: kills and preemptions, both restart policies.

A chief and a worker train examples/pytorch/train.py (or examples/lightning/train.py)
under `vtrain local run --kill`. Faults: SIGKILL of the worker or the chief, and
SIGTERM of either (a preemption: SIGKILL 30 s later unless it exits). Policies: the
failed replica restarts alone (Vertex's default) or the whole job does
(`--restart-job-on-worker-restart`). Every cell must finish, resumed from the last
commit; the DDP example, deterministic, ends with the uninterrupted run's parameters.
A cell that overruns its timeout fails: none may hang.

Each cell prints its figures (`pytest -s`); bench/faults.py sets them against the
targets. The representative DDP cell of the default `nox` is the rehearsal page's kill block
(tests/pytorch/test_readme.py), and Lightning's is test_lightning.py's restart.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cluster_run import EXAMPLES, final_parameters
from fault_cells import FAULTS, FREEZES, POLICIES, CellRun, check_frozen, run_cell

pytestmark = pytest.mark.faults

TICKING = str(Path(__file__).parent / "scripts" / "ticking.py")
DDP = [TICKING, str(EXAMPLES / "pytorch" / "train.py"), "--steps", "150", "--step-delay", "0.1"]
DDP_EVERY = 10  # the example's --checkpoint-every
DDP_START = r"starting at step (\d+)"
# 2 replicas x 16 rows of 480: 15 steps an epoch, one commit an epoch, 0.2 s a step.
LIGHTNING = [TICKING, str(EXAMPLES / "lightning" / "train.py"), "--epochs", "4"]
LIGHTNING_EVERY = 15
LIGHTNING_START = r"Restoring states from the checkpoint path .*step-0*(\d+)"
KILL_AT = 14  # seconds: past the cold start (5 to 9 s) and the first commits, mid-training
TIMEOUT = 150  # a cell takes about 30 s; one that hangs fails here, and is stopped
CELLS = [(fault, policy) for fault in FAULTS for policy in POLICIES]
FROZEN = [(fault, policy) for fault in FREEZES for policy in POLICIES]
# A restarted replica that finds its peer frozen waits in the rendezvous: its first-step
# allowance (120 s in a rehearsal) is cut to 30 s, and one restart is enough to show it.
FROZEN_OPTIONS = ["--max-restarts", "1"]
FROZEN_ENV = {"VTRAIN_FIRST_STEP_SECONDS": "30"}
DETECT_WITHIN = 30.0  # seconds from the freeze to the first watchdog's line (issue 45)
# From the freeze: the resumed chief's first step, or the job's stop (one lone restart of 30 s).
SETTLE_WITHIN = 100.0
FROZEN_CHECK = {
    "timeout": TIMEOUT,
    "detect_within": DETECT_WITHIN,
    "every": DDP_EVERY,
    "settle_within": SETTLE_WITHIN,
}


def cell(
    out: Path, fault: str | None, policy: str, command: list[str], start: str, **env: str
) -> CellRun:
    kill = [] if fault is None else ["--kill", FAULTS[fault].format(at=KILL_AT)]
    return run_cell(
        out,
        ["--workers", "1", *POLICIES[policy], *kill],
        command,
        start_line=start,
        timeout=TIMEOUT,
        **env,
    )


@pytest.fixture(scope="module")
def ddp_uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> CellRun:
    run = cell(tmp_path_factory.mktemp("ddp-whole"), None, "replica", DDP, DDP_START)
    assert run.returncode == 0, run.output
    return run


def report(framework: str, fault: str, policy: str, run: CellRun, cold: CellRun) -> None:
    """The cell's figures, for `pytest -s` and the CI log."""
    start = cold.first_step()
    print(
        f"\n{framework} | {fault} | {policy}: {run.figures()}; "
        f"cold start {'-' if start is None else f'{start:.1f} s'}"
    )


def check_resumed(
    run: CellRun,
    fault: str,
    every: int,
    *,
    committing: tuple[str, ...],
    announcing: tuple[str, ...] = ("preempt chief",),
) -> None:
    """Finished, after a kill that landed mid-training, resumed from a commit.

    `committing`: the faults after which a commit is made where training stopped;
    `announcing`: those after which the chief says `preempted (SIGTERM): committed step N`.
    """
    assert not run.timed_out, f"hung past {TIMEOUT} s:\n{run.shown()}"
    assert run.returncode == 0, run.shown()
    assert run.killed_at is not None and "nothing to kill" not in run.output, run.shown()
    assert len(run.lives["chief-0"]) >= 2, run.shown()  # the chief ran again
    redone = run.redone()
    assert redone is not None
    if not run.trained_before_kill():  # nothing to commit yet
        assert run.resumed() == 0 and redone == 0 and run.committed_step is None, run.shown()
        return
    if fault in committing:
        # SIGTERM stops training at the next save point, committed: nothing is trained twice.
        assert redone == 0, run.shown()
    else:
        assert run.resumed() % every == 0, run.resumed()
        # A SIGKILL loses what the last commit had not saved; a commit still being written
        # when it lands is lost too, so the one before counts.
        assert redone <= 2 * every, run.shown()
    if fault in announcing:
        assert run.committed_step == run.resumed(), run.shown()
        assert f"chief-0 preempted (SIGTERM): committed step {run.resumed()}" in run.output
        commit = run.commit()
        assert commit is not None and commit < 30, commit  # within the notice, before SIGKILL


@pytest.mark.parametrize(("fault", "policy"), CELLS, ids=[f"{f}-{p}" for f, p in CELLS])
def test_ddp_cell_resumes_to_the_uninterrupted_parameters(
    fault: str, policy: str, ddp_uninterrupted: CellRun, tmp_path: Path
) -> None:
    run = cell(tmp_path, fault, policy, DDP, DDP_START)
    report("pytorch ddp", fault, policy, run, ddp_uninterrupted)
    # Every process saves at the same steps: after a SIGTERM, the next save is the last.
    check_resumed(run, fault, DDP_EVERY, committing=("preempt worker", "preempt chief"))
    if run.resumed():
        assert f"resumed from step {run.resumed()}" in run.output
    final = final_parameters(run.output)
    assert final == final_parameters(ddp_uninterrupted.output)


@pytest.fixture(scope="module")
def lightning_cold(tmp_path_factory: pytest.TempPathFactory) -> CellRun:
    run = cell(
        tmp_path_factory.mktemp("lightning-whole"),
        None,
        "replica",
        LIGHTNING,
        LIGHTNING_START,
        TICK_DELAY="0.2",
    )
    assert run.returncode == 0, run.output
    return run


@pytest.mark.parametrize(("fault", "policy"), CELLS, ids=[f"{f}-{p}" for f, p in CELLS])
def test_lightning_cell_resumes_from_the_committed_epoch(
    fault: str, policy: str, lightning_cold: CellRun, tmp_path: Path
) -> None:
    run = cell(tmp_path, fault, policy, LIGHTNING, LIGHTNING_START, TICK_DELAY="0.2")
    report("lightning", fault, policy, run, lightning_cold)
    # Any rank's SIGTERM stops every rank after the same batch, committed there.
    preempt = ("preempt worker", "preempt chief")
    check_resumed(run, fault, LIGHTNING_EVERY, committing=preempt, announcing=preempt)
    steps = sorted(p.name for p in (tmp_path / "checkpoints").iterdir())
    assert steps[-1] == "step-000000000060", steps  # 4 epochs of 15 steps, the last committed


def frozen_cell(out: Path, fault: str, policy: str) -> CellRun:
    """The DDP example with a replica frozen (SIGSTOP) mid-training, as a machine that hangs."""
    return run_cell(
        out,
        ["--workers", "1", *FROZEN_OPTIONS, *POLICIES[policy]]
        + ["--kill", FREEZES[fault].format(at=KILL_AT)],
        DDP,
        start_line=DDP_START,
        timeout=TIMEOUT,
        **FROZEN_ENV,
    )


@pytest.mark.parametrize(("fault", "policy"), FROZEN, ids=[f"{f}-{p}" for f, p in FROZEN])
def test_ddp_frozen_cell_resumes_or_stops_with_a_reason(
    fault: str, policy: str, ddp_uninterrupted: CellRun, tmp_path: Path
) -> None:
    run = frozen_cell(tmp_path, fault, policy)
    report("pytorch ddp", fault, policy, run, ddp_uninterrupted)
    print(f"ended {run.ended():.1f} s after the freeze")
    check_frozen(run, policy, **FROZEN_CHECK)
    if policy == "job":
        assert final_parameters(run.output) == final_parameters(ddp_uninterrupted.output)
