"""The fault matrix for TensorFlow's ParameterServerStrategy and Keras MWMS: the missing cells.

examples/keras/train.py under `vtrain local run --kill`, 14 epochs of 16 steps
with a 1 s pause after each, so that a kill at 14 s lands mid-training (22 epochs
and a kill at 20 s for ParameterServerStrategy, slower to start). Policies:
the failed replica restarts alone (Vertex's default) or the whole job does
(`--restart-job-on-worker-restart`).

- ParameterServerStrategy (a coordinator chief, two workers, a ps), every
  fault: a killed or preempted worker restarts and serves again while the
  coordinator carries on (its ClusterCoordinator retries the lost steps
  elsewhere); a killed ps fails the coordinator's step, and a killed coordinator
  is gone: it restarts and resumes from the last epoch committed; a SIGTERM of
  the coordinator commits where it stops (`committed step N`) and the restart
  resumes from there.
- MultiWorkerMirroredStrategy (a chief and a worker): the cells the other files
  lack, kills under Vertex's default and SIGTERMs under the whole-job policy.
  Kills under the whole-job policy are test_keras_resume.py's and
  test_cluster.py's, and SIGTERMs under Vertex's default test_keras_preemption.py's;
  Keras in one process is test_keras_resume.py's.

Every cell must finish, trained (the example's weights near the true ones); one
that overruns its timeout fails: none may hang. Each runs the example through
scripts/ticking.py and prints its figures (`pytest -s`); bench/faults.py sets them
against the targets.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from cluster_run import EXAMPLES
from fault_cells import FAULTS, FREEZES, POLICIES, CellRun, check_frozen, run_cell

pytestmark = [pytest.mark.faults, pytest.mark.timeout(400)]

EPOCHS = 14
PS_EPOCHS = 22  # four TensorFlow processes start at once: a later kill, and more to train after it
TICKING = str(Path(__file__).parent / "scripts" / "ticking.py")
EXAMPLE = [TICKING, str(EXAMPLES / "keras" / "train.py"), "--epoch-delay", "1"]
EVERY = 16  # steps: 512 samples in batches of 32, a commit at each epoch's end
START = r"vtrain-resume-step (\d+)"  # scripts/ticking.py's: the epochs resumed, in steps
TRUE_WEIGHTS = [i / 8 for i in range(1, 9)]
KILL_AT = 14  # seconds: about 6 s to the first epoch, then 1 s an epoch
# ParameterServerStrategy's four processes take 8 s (quiet) to 20 s (CI's load) to its
# first epoch: its kill comes later, and its runs are longer (PS_EPOCHS).
PS_KILL_AT = 20
LAG = 4  # epochs a background commit was seen behind the chief's training, under CI's load
TIMEOUT = 240  # a cell takes 30 to 60 s; one that hangs fails here, and is stopped
PS = ["--workers", "2", "--ps", "1"]
PS_FAULTS = {**FAULTS, "kill ps": "ps:0@{at}"}
PS_CELLS = [(fault, policy) for fault in PS_FAULTS for policy in POLICIES]
# A frozen replica: MWMS's worker and chief, and ParameterServerStrategy's ps, both policies.
# A lone MWMS restart beside a frozen peer blocks in TensorFlow's coordination service
# (CoordinationServiceAgent::Connect, from MultiWorkerMirroredStrategy's start) with the GIL
# held: its watchdog's thread cannot run, and the backstop's timer ends it.
FROZEN = [
    *((["--workers", "1"], fault, policy) for fault in FREEZES for policy in POLICIES),
    *((PS, "freeze ps", policy) for policy in POLICIES),
]
TF_FREEZES = {**FREEZES, "freeze ps": "ps:0@{at}:STOP"}
# A lone restart that finds its peer frozen waits to start: one restart shows it, and its
# first-step allowance (120 s in a rehearsal) is cut to 45 s, past a loaded cold start. The
# whole job gets a second restart, for a stall as `fit` returns (STALL).
FROZEN_OPTIONS = {"replica": ["--max-restarts", "1"], "job": ["--max-restarts", "2"]}
FROZEN_ENV = {"VTRAIN_FIRST_STEP_SECONDS": "45"}
FROZEN_CHECK = {
    "timeout": TIMEOUT,
    # The watchdog's floor (20 s: a step takes milliseconds), and 10 s; under MWMS TensorFlow's
    # own heartbeat fails the peer first (10 s), but its abort took up to 31 s to exit on a
    # loaded 2-core machine, the watchdog's thread held off meanwhile (the backstop: 40 s).
    "detect_within": 45.0,
    "every": EVERY,
    "settle_within": 120.0,
}
# TensorFlow can stall as `fit` returns, in a job with a restarted replica under CI's load:
# the main thread deletes a traced function (AtomicFunction.__del__, context.remove_function)
# and never comes back, MWMS and ParameterServerStrategy alike. The watchdog finds it (or its
# backstop, where the C code holds the GIL) and ends the replica, and the restart resumes
# from the last commit: a later restart is allowed when that is its cause (stall_restarts).
STALL = re.compile(r"^vtrain +\| (\S+) was stuck \(.*(restarting every replica|; restart )", re.M)
MWMS_CELLS = [
    ("kill worker", "replica"),
    ("kill chief", "replica"),
    ("preempt worker", "job"),
    ("preempt chief", "job"),
]


def cell(
    out: Path, layout: list[str], kill: str | None, policy: str, *options: str, **env: str
) -> tuple[CellRun, float]:
    """The cell's run, and the seconds from its kill to its end; no kill: the cold start."""
    at, epochs = (PS_KILL_AT, PS_EPOCHS) if layout == PS else (KILL_AT, EPOCHS)
    killing = [] if kill is None else ["--kill", kill.format(at=at)]
    command = [*EXAMPLE, "--epochs", str(epochs)]
    run = run_cell(
        out,
        [*layout, *options, *POLICIES[policy], *killing],
        command,
        start_line=START,
        timeout=TIMEOUT,
        **env,
    )
    return run, time.time() - (run.killed_at or run.launched)


def frozen_cell(out: Path, fault: str, policy: str) -> CellRun:
    """A frozen cell's run (bench/hangs.py runs them too): a frozen ps under
    ParameterServerStrategy, a frozen chief or worker under MWMS."""
    layout = PS if fault == "freeze ps" else ["--workers", "1"]
    return cell(out, layout, TF_FREEZES[fault], policy, *FROZEN_OPTIONS[policy], **FROZEN_ENV)[0]


def weights(run: CellRun, replica: str) -> list[float]:
    lines = [ln for ln in run.output.splitlines() if ln.startswith(f"{replica} ")]
    found = [ln.split("final weights ", 1)[1] for ln in lines if "final weights " in ln]
    assert found, run.shown()
    return list(json.loads(found[-1]))


def resumed_epochs(run: CellRun) -> list[int]:
    """The epochs the chief's restarts resumed from, in order."""
    return [
        int(e)
        for e in re.findall(
            r"^chief-0 *\| vtrain: resumed from .* \((\d+) done\)$", run.output, re.M
        )
    ]


def stall_restarts(run: CellRun) -> int:
    """How many restarts the watchdog's finding of a stall as `fit` returns caused (STALL):
    each one counts only after a life of that replica that had trained to the job's last step."""
    counted = 0
    for who, times in Counter(found[1] for found in STALL.finditer(run.output)).items():
        lives = run.lives.get(who, [])
        reached = [max((step for step, _ in life.ticks), default=life.base) for life in lives]
        counted += min(times, reached[:-1].count(max(reached, default=-1)))
    return counted


def resumes_allowed(run: CellRun, epochs: list[int]) -> None:
    """The fault's own resume, plus one per stall the watchdog found; each from a commit no
    older than the one before."""
    assert epochs == sorted(epochs), (epochs, run.shown())
    assert len(epochs) <= 1 + stall_restarts(run), (epochs, run.shown())


def finished(run: CellRun, fault: str, policy: str, took: float) -> None:
    print(
        f"\n{fault} | {policy}: finished {took:.1f} s after the kill; "
        f"chief resumed from epochs {resumed_epochs(run)}; {run.figures()}"
    )
    assert not run.timed_out, f"hung past {TIMEOUT} s:\n{run.shown()}"
    assert run.killed_at is not None and "nothing to kill" not in run.output, run.shown()
    assert run.returncode == 0, run.shown()
    assert "job succeeded (exit status 0): chief-0 exited 0" in run.output
    assert weights(run, "chief-0")[:8] == pytest.approx(TRUE_WEIGHTS, abs=0.1)


@pytest.mark.parametrize(("fault", "policy"), PS_CELLS, ids=[f"{f}-{p}" for f, p in PS_CELLS])
def test_parameter_server_cell_finishes_resumed(fault: str, policy: str, tmp_path: Path) -> None:
    run, took = cell(tmp_path, PS, PS_FAULTS[fault], policy)
    finished(run, f"tf ps {fault}", policy, took)
    who = PS_FAULTS[fault].split("@")[0].replace(":", "-")
    if policy == "job":
        said = "preempted" if fault == "preempt chief" else "was killed"
        assert f"{who} {said}" in run.output, run.shown()
        assert "; restarting every replica" in run.output and "job restart 1 of" in run.output
    elif fault.endswith("worker"):
        # The coordinator carries on: the worker restarts alone and serves again (a worker
        # only serves: SIGTERM ends it at once, with nothing of its own to commit).
        assert "worker-0 was killed (--kill); restart 1 of" in run.output, run.shown()
        assert len(resumed_epochs(run)) <= stall_restarts(run), run.shown()
        return
    # Resumed from a commit (one at each epoch's end, in the background: under CI's load
    # the commits were seen 4 epochs behind when SIGKILL landed). A kill before the first
    # epochs ended (a cold start past PS_KILL_AT, under load) rightly starts from nothing.
    ended = len(run.lives["chief-0"][0].ticks)
    epochs = resumed_epochs(run) or [0]
    assert epochs[0] <= ended, (ended, epochs, run.shown())
    if fault == "kill ps":
        # A killed ps restarts beside the restarting coordinator. Under CI's load the
        # coordinator once restarted twice, resuming from epochs [6, 8] (its log was cut,
        # and 3 local runs, one under load, restarted once).
        assert epochs == sorted(epochs), (ended, epochs, run.shown())
    else:
        resumes_allowed(run, epochs)
    assert epochs[0] > 0 or ended <= LAG, (ended, epochs, run.shown())
    if fault == "preempt chief":
        # The coordinator commits where it stops, exits 143, and the restart starts there.
        found = re.search(r"chief-0 preempted \(SIGTERM\): committed step (\d+)", run.output)
        assert found, run.shown()
        assert f"step-{int(found[1]):012d} " in run.output  # resumed from that step's folder


@pytest.mark.parametrize(("fault", "policy"), MWMS_CELLS, ids=[f"{f}-{p}" for f, p in MWMS_CELLS])
def test_multi_worker_cell_finishes_resumed(fault: str, policy: str, tmp_path: Path) -> None:
    run, took = cell(tmp_path, ["--workers", "1"], FAULTS[fault], policy)
    finished(run, f"keras mwms {fault}", policy, took)
    killed, peer = ("worker-0", "chief-0") if fault.endswith("worker") else ("chief-0", "worker-0")
    if policy == "job":
        # PreemptionCheckpointHandler: every worker commits the same step and exits 143,
        # the notified one or its peer first; then the job restarts.
        said = [ln for ln in run.output.splitlines() if ln.startswith("vtrain ")]
        found = re.search(
            r"(chief|worker)-0 preempted \(SIGTERM\): committed step (\d+)[^\n]*; "
            "restarting every replica",
            "\n".join(said),
        )
        assert found, "\n".join(said)
        assert "job restart 1 of" in run.output
        assert f"step-{int(found[2]):012d} " in run.output  # resumed from that step's folder
    else:
        # The peer's collective aborts, it fails and restarts too: both resume together.
        assert f"{killed} was killed (--kill); restart 1 of" in run.output, run.shown()
        then = f"{peer} exited with 1, as expected after {killed}'s kill; restart 1 of"
        assert then in run.output, run.shown()
        assert "job restart" not in run.output
    resumes_allowed(run, resumed_epochs(run))
    assert weights(run, "worker-0") == weights(run, "chief-0")


@pytest.mark.parametrize(
    ("layout", "fault", "policy"),
    FROZEN,
    ids=lambda value: ("ps" if value == PS else "mwms") if isinstance(value, list) else value,
)
def test_frozen_cell_resumes_or_stops_with_a_reason(
    layout: list[str], fault: str, policy: str, tmp_path: Path
) -> None:
    options = FROZEN_OPTIONS[policy]
    run, took = cell(tmp_path, layout, TF_FREEZES[fault], policy, *options, **FROZEN_ENV)
    name = "tf ps" if layout == PS else "keras mwms"
    print(
        f"\n{name} | {fault} | {policy}: {run.figures()}; ended {took:.1f} s after; "
        f"chief resumed from epochs {resumed_epochs(run)}"
    )
    print("\n".join(ln for ln in run.output.splitlines() if ln.startswith("vtrain ")))
    # MWMS: TensorFlow's coordination service misses the peer's heartbeats within 10 s and
    # fails the survivor (exit 1) before its watchdog's 20 s.
    check_frozen(run, policy, watchdog=layout == PS, **FROZEN_CHECK)
    if policy == "job":
        # The freeze's restart; any other only for a stall the watchdog found.
        assert len(run.lives["chief-0"]) - 1 - stall_restarts(run) <= 1, run.shown()
        assert weights(run, "chief-0")[:8] == pytest.approx(TRUE_WEIGHTS, abs=0.1)
        if layout != PS:
            assert weights(run, "worker-0") == weights(run, "chief-0")
