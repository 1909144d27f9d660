"""SIGTERM on an MXNet worker: that step is committed, exit 143, and the resume redoes none.

Alone (the worker's own flag decides), in a process of its own: the handler's
deadline would end pytest's. Under dist_sync the workers agree through the
kvstore every so many steps: on a real cluster here, with steps fast enough
that a check spans many of them, and in tests/mxnet/test_fault_matrix.py's
preemption cells (`nox -s faults`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cluster_run import clean_env, final_parameters, local_run
from hypothesis import given
from hypothesis import strategies as st
from test_cluster import alone

from vtrain.preemption import EXIT_STATUS, committed_line
from vtrain_mxnet.preemption import MAX_STEPS_PER_CHECK, PREEMPT_KEY, steps_per_check

SIGTERM_AT = str(Path(__file__).parent / "scripts" / "sigterm_at.py")
ARGS = ["--epochs", "3", "--steps-per-epoch", "4"]


def test_the_flag_key_is_one_no_other_part_of_the_plugin_uses() -> None:
    from vtrain_mxnet.data import MORE_KEY
    from vtrain_mxnet.rank_zero import KEY

    assert len({PREEMPT_KEY, MORE_KEY, KEY}) == 3
    assert PREEMPT_KEY * 9973 < 2**31  # ps-lite's server choice, in a C int


def test_a_sigterm_commits_that_step_exits_143_and_the_rerun_ends_as_an_uninterrupted_one(
    tmp_path: Path,
) -> None:
    env = clean_env(
        VTRAIN_OUTPUT_DIR=str(tmp_path / "out"),
        SIGTERM_AT="6",
        CLOUD_ML_HP_METRIC_FILE=str(tmp_path / "m"),
    )

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, SIGTERM_AT, *ARGS],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    first = run()
    assert first.returncode == EXIT_STATUS, first.stdout + first.stderr
    assert committed_line(6) in first.stderr, first.stderr  # vtrain says it, through logging
    assert "final parameters" not in first.stdout
    second = run()
    assert second.returncode == 0, second.stdout + second.stderr
    assert "resumed from epoch 1 + 2 steps" in second.stdout, second.stdout
    # Momentum included: the trainer's states were committed at that step.
    assert final_parameters(second.stdout) == pytest.approx(
        alone(tmp_path, ARGS), rel=1e-5, abs=1e-6
    )


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_the_steps_between_two_checks_are_a_whole_number_within_bounds(seconds: float) -> None:
    steps = steps_per_check(seconds)
    assert isinstance(steps, int) and 1 <= steps <= MAX_STEPS_PER_CHECK


def test_one_worker_s_sigterm_stops_every_worker_after_the_same_step_and_the_job_resumes_there(
    tmp_path: Path,
) -> None:
    # No step delay: a step takes milliseconds, so the workers sum their flags every
    # tens of steps, and the worker of rank 1 gets SIGTERM between two sums.
    args = ["--epochs", "3", "--steps-per-epoch", "200"]
    run = local_run(
        tmp_path / "out",
        ["--workers", "2", "--ps", "1", "--restart-job-on-worker-restart"],
        [SIGTERM_AT, *args],
        SIGTERM_AT="150",
        SIGTERM_RANK="1",
    )
    assert run.returncode == 0, run.output
    step = int(run.output.split("preempted (SIGTERM): committed step ")[1].split()[0])
    assert 150 <= step < 600, run.output
    assert "restarting every replica" in run.output, run.output
    done, mid = divmod(step, 200)
    resumed = f"epoch {done}{f' + {mid} steps' if mid else ''}"
    assert [run.last(w, "resumed from") for w in ("worker-0", "worker-1")] == [resumed] * 2
    first = run.params("worker-0")
    assert run.params("worker-1") == first
    # Had the workers stopped after different steps, the commit would mix them.
    assert first == pytest.approx(alone(tmp_path, args), rel=1e-5, abs=1e-6)
