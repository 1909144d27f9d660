"""The fault matrix for MXNet dist_sync: kills and preemptions of every role, both policies.

Two workers train examples/mxnet/train.py (through scripts/ticking.py) beside a
parameter server, the chief running MXNet's scheduler: the example's documented
layout, where the chief does not train. Faults: SIGKILL or SIGTERM (a preemption)
of a worker, of the chief (the scheduler), and SIGKILL of the server. Policies:
the failed replica restarts alone (Vertex's default) or the whole job does
(`--restart-job-on-worker-restart`).

ps-lite takes no restarted node, whatever its role: under the whole-job policy
every cell resumes from the last commit, to the uninterrupted run's parameters;
under Vertex's default every cell stops, within a bound, with the one-line
reason that says to restart the whole job. A preempted worker commits first:
after the next step every worker knows (a flag summed through the kvstore), the
leader (worker 0) commits that step and says `committed step N` within the 30 s
before SIGKILL, and every worker exits 143; the job resumes there, with no step
redone. The chief only schedules: its SIGTERM ends it at once, and the job
resumes from the last epoch committed. A cell that overruns its timeout fails.

The representative cells of the default `nox` are test_cluster.py's
test_a_killed_worker_resumes_from_the_last_checkpoint and
test_mxnet_job_restarts.py's lone restart.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from cluster_run import final_parameters
from fault_cells import FAULTS, FREEZES, POLICIES, CellRun, check_frozen, run_cell

pytestmark = pytest.mark.faults

TICKING = str(Path(__file__).parent / "scripts" / "ticking.py")
PER_EPOCH = 5  # steps an epoch: the example commits once an epoch, and at a preemption
EXAMPLE = [TICKING, "--epochs", "8", "--steps-per-epoch", str(PER_EPOCH), "--step-delay", "0.3"]
START = r"vtrain-resume-step (\d+)"
MX_FAULTS = {**FAULTS, "kill server": "ps:0@{at}"}
KILL_AT = 12  # seconds: past the cold start (3 to 8 s) and the first commits, mid-training
TIMEOUT = 150  # a cell takes about 35 s; one that hangs fails here, and is stopped
STOP_BOUND = 30  # seconds from the kill to the end of a job that stops
REASON = (
    "MXNet workers cannot rejoin a running ps-lite job, so restart the whole job "
    "(--restart-job-on-worker-restart here, scheduling.restartJobOnWorkerRestart on Vertex)"
)
CELLS = [(fault, policy) for fault in MX_FAULTS for policy in POLICIES]
COMMITTING = ("preempt worker",)  # the faults that commit a step before the job restarts
NOTICE = 30  # seconds from a SIGTERM to the SIGKILL that follows it on the platforms
# The scheduler (the chief) only serves: it has no watchdog, and a worker or the server
# frozen is found by the workers' watchdogs, waiting in the kvstore.
MX_FREEZES = {"freeze worker": FREEZES["freeze worker"], "freeze server": "ps:0@{at}:STOP"}
FROZEN = [(fault, policy) for fault in MX_FREEZES for policy in POLICIES]
FROZEN_CHECK = {
    "timeout": TIMEOUT,
    "detect_within": 30.0,  # the watchdog's floor (20 s: a step is 0.3 s), and 10 s
    "every": PER_EPOCH,
    "settle_within": 60.0,
}


def cell(out: Path, fault: str | None, policy: str, **env: str) -> tuple[CellRun, float]:
    """The cell's run, and the seconds from its kill to its end (`env`: on top of the job's)."""
    faults = {**MX_FAULTS, **MX_FREEZES}
    kill = [] if fault is None else ["--kill", faults[fault].format(at=KILL_AT)]
    run = run_cell(
        out,
        ["--workers", "2", "--ps", "1", *POLICIES[policy], *kill],
        EXAMPLE,
        start_line=START,
        timeout=TIMEOUT,
        lead="worker-0",
        **env,
    )
    return run, time.time() - (run.killed_at or run.launched)


def frozen_cell(out: Path, fault: str, policy: str) -> CellRun:
    """A frozen cell's run (bench/hangs.py runs them too)."""
    return cell(out, fault, policy)[0]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> CellRun:
    run, _ = cell(tmp_path_factory.mktemp("whole"), None, "replica")
    assert run.returncode == 0, run.output
    return run


def leading(run: CellRun) -> str:
    """The worker the example said leads (MXNet's rank 0: the order the workers joined in)."""
    said = [ln.split()[0] for ln in run.output.splitlines() if ln.endswith("leader: True")]
    assert said, run.shown()
    return said[0]


def params(run: CellRun, replica: str) -> list[float]:
    lines = [ln for ln in run.output.splitlines() if ln.startswith(f"{replica} ")]
    return final_parameters("\n".join(lines))


@pytest.mark.parametrize(("fault", "policy"), CELLS, ids=[f"{f}-{p}" for f, p in CELLS])
def test_cell_resumes_whole_or_stops_with_the_reason(
    fault: str, policy: str, uninterrupted: CellRun, tmp_path: Path
) -> None:
    run, took = cell(tmp_path, fault, policy)
    start = uninterrupted.first_step()
    print(
        f"\nmxnet dist_sync | {fault} | {policy}: {run.figures()}; stopped or finished "
        f"{took:.1f} s after the kill; cold start "
        f"{'-' if start is None else f'{start:.1f} s'}"
    )
    assert not run.timed_out, f"hung past {TIMEOUT} s:\n{run.shown()}"
    assert run.killed_at is not None and "nothing to kill" not in run.output, run.shown()
    who = MX_FAULTS[fault].split("@")[0].replace(":", "-")
    said = f"{who} was killed (--kill)"
    if not run.trained_before_kill():  # nothing to commit; alone, it stops and says why
        assert run.committed_step is None, run.shown()
        if policy == "replica":
            assert run.returncode != 0 and REASON in run.output, run.shown()
        else:
            assert run.returncode == 0 and run.resumed() == 0, run.shown()
        return
    if fault in COMMITTING:
        # The leader (MXNet's rank 0, either worker) commits, and exits first: vtrain
        # reads the step from its line, the one that ends (or restarts) the job.
        step = run.committed_step
        assert step is not None and step > 0, run.shown()
        leader = leading(run)
        said = f"{leader} preempted (SIGTERM): committed step {step}"
        if leader != who:
            said += f", as expected after {who}'s kill"
        who = leader
        commit = run.commit()
        assert commit is not None and commit < NOTICE, commit
    if policy == "replica":
        # A lone restart would wait forever in ps-lite: the job stops, and says why.
        assert run.returncode != 0, run.shown()
        assert f"job failed (exit status {run.returncode}): {who} " in run.output
        assert f"{said}: {REASON}" in run.output, run.shown()
        assert "restart 1 of" not in run.output
        assert took < STOP_BOUND, took
        return
    assert run.returncode == 0, run.shown()
    assert f"{said}; restarting every replica" in run.output, run.shown()
    assert len(run.lives["worker-0"]) == 2, run.shown()  # the job ran again, once
    resumed = run.resumed()
    assert resumed > 0, run.shown()
    done, mid = divmod(resumed, PER_EPOCH)
    assert f"resumed from epoch {done}{f' + {mid} steps' if mid else ''}" in run.output
    redone = run.redone()
    if fault in COMMITTING:
        assert resumed == run.committed_step, run.shown()
        assert redone == 0, run.shown()
    else:
        # A commit still being written when the kill lands is lost: the one before counts.
        assert resumed % PER_EPOCH == 0, run.shown()
        assert redone is not None and redone <= 2 * PER_EPOCH, run.shown()
    first = params(run, "worker-0")
    assert params(run, "worker-1") == first
    # Momentum included: the trainer's states came back with the parameters.
    assert first == pytest.approx(params(uninterrupted, "worker-0"), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize(("fault", "policy"), FROZEN, ids=[f"{f}-{p}" for f, p in FROZEN])
def test_frozen_cell_resumes_whole_or_stops_with_the_reason(
    fault: str, policy: str, uninterrupted: CellRun, tmp_path: Path
) -> None:
    run, took = cell(tmp_path, fault, policy)
    print(f"\nmxnet dist_sync | {fault} | {policy}: {run.figures()}; ended {took:.1f} s after")
    print("\n".join(ln for ln in run.output.splitlines() if ln.startswith("vtrain ")))
    check_frozen(run, policy, **FROZEN_CHECK)
    if policy == "replica":
        assert REASON in run.output and "restart 1 of" not in run.output, run.shown()
        return
    first = params(run, "worker-0")
    assert params(run, "worker-1") == first
    assert first == pytest.approx(params(uninterrupted, "worker-0"), rel=1e-5, abs=1e-6)
