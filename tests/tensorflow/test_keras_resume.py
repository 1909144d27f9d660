"""Kill or preempt a real Keras job, run it again: it resumes, and ends as an uninterrupted run.

Alone (Keras 3), and as a MultiWorkerMirrored chief and worker (tf-keras).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cluster_run import clean_env, local_run

JOB = str(Path(__file__).with_name("keras_resume_job.py"))
EPOCHS = 6


def run_alone(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, JOB, *args],
        env=clean_env(VTRAIN_OUTPUT_DIR=str(out)),
        capture_output=True,
        text=True,
        timeout=300,
    )


def printed(output: str, prefix: str) -> list[str]:
    return [line[len(prefix) :].strip() for line in output.splitlines() if line.startswith(prefix)]


def final(output: str) -> tuple[list[float], int]:
    """The final weights and optimizer step count a run printed."""
    (weights,) = printed(output, "final weights")
    (iterations,) = printed(output, "final iterations")
    return json.loads(weights), int(iterations)


def weights_by_epoch(output: str) -> dict[int, list[float]]:
    """The weights the job printed after each epoch, by epoch number from 1."""
    found = re.findall(r"^epoch (\d+) weights (.*)$", output, re.M)
    return {int(epoch): json.loads(weights) for epoch, weights in found}


def started_at(output: str) -> int:
    """`fit`'s initial_epoch in the replica's last life, as the job printed it (every replica)."""
    return int(printed(output, "initial epoch")[-1])


def resumed_at(said: str) -> int:
    """`done` (fit's initial_epoch) of the core's one resume line, in what vtrain said (stderr)."""
    (line,) = printed(said, "vtrain: resumed from")
    return int(re.findall(r"\((\d+) done\)$", line)[0])


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The output of the job run once, start to end, alone."""
    done = run_alone(tmp_path_factory.mktemp("uninterrupted"))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_final_weights_tell_one_epoch_from_another(uninterrupted: str) -> None:
    # What makes the comparisons below mean something: an epoch too many or too few, or
    # Adam's moments lost on the way, would move the weights by far more than rounding.
    epochs = weights_by_epoch(uninterrupted)
    last, before = epochs[EPOCHS], epochs[EPOCHS - 1]
    assert max(abs(a - b) for a, b in zip(last, before, strict=True)) > 1e-3


@pytest.mark.faults  # a fault-matrix cell: `nox -s faults`
def test_a_process_killed_mid_epoch_resumes_at_that_epoch_with_the_same_result(
    uninterrupted: str, tmp_path: Path
) -> None:
    killed = run_alone(tmp_path, "--die-at", "3:5")  # SIGKILL after batch 5 of epoch 4
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert "dying at (3, 5)" in killed.stdout and "final weights" not in killed.stdout

    again = run_alone(tmp_path, "--die-at", "3:5")
    assert again.returncode == 0, again.stdout + again.stderr
    assert resumed_at(again.stderr) == 3  # epochs 1-3 were committed; epoch 4 starts over
    (start,) = printed(again.stdout, "start weights")
    assert json.loads(start) == weights_by_epoch(uninterrupted)[3]
    assert printed(again.stdout, "Epoch")[0] == f"4/{EPOCHS}"
    assert final(again.stdout) == final(uninterrupted)


def test_sigterm_commits_a_checkpoint_and_the_restart_resumes_from_it(tmp_path: Path) -> None:
    preempted = run_alone(tmp_path, "--term-at", "2:3")  # SIGTERM after batch 3 of epoch 3
    assert preempted.returncode == 143, preempted.stdout + preempted.stderr
    (saved,) = printed(preempted.stderr, "vtrain: preempted (SIGTERM): committed step")
    assert saved.startswith("19 (epoch 3)")  # 2 epochs of 8 batches, and 3 more
    (at_term,) = printed(preempted.stdout, "terminated at (2, 3) with weights")

    again = run_alone(tmp_path, "--term-at", "2:3")
    assert again.returncode == 0, again.stdout + again.stderr
    (line,) = printed(again.stderr, "vtrain: resumed from")
    assert line.endswith("step-000000000019 (2 done)")  # epoch 3 again: initial_epoch=2
    (start,) = printed(again.stdout, "start weights")
    assert json.loads(start) == json.loads(at_term)
    # Epoch 3 runs again from its start, from the state saved 3 batches into it: Adam
    # has counted those batches, so the run ends 3 steps ahead of an uninterrupted one.
    assert final(again.stdout)[1] == EPOCHS * 8 + 3


@pytest.mark.faults  # a fault-matrix cell: `nox -s faults`
@pytest.mark.timeout(420)
def test_multi_worker_job_restarted_after_the_chief_is_killed_ends_as_an_uninterrupted_one(
    tmp_path: Path,
) -> None:
    whole = local_run(tmp_path / "whole", ["--workers", "1"], [JOB])
    assert whole.returncode == 0, whole.output
    # The first run's chief stops 3 batches into epoch 3 and waits there (the worker with
    # it, in the next all-reduce) until --kill takes its "VM" away; the job restarts. The hold,
    # not the clock, fixes what is committed; 30 s only has to be after the hold begins.
    run = local_run(
        tmp_path / "killed",
        ["--workers", "1", "--kill", "chief:0@30", "--restart-job-on-worker-restart"],
        [JOB, "--hold-at", "2:3"],
    )
    assert run.returncode == 0, run.output
    assert "job restart 1 of" in run.output
    before, _, after = run.logs["chief-0"].partition("sending SIGKILL to chief-0")
    assert "holding at (2, 3)" in before, "the kill must land while the chief holds"
    # The leader logs the one resume line; every replica resumed from the same epoch.
    assert resumed_at(run.logs["chief-0"]) == 2, run.logs["chief-0"][-3000:]
    for replica in ("chief-0", "worker-0"):
        assert started_at(run.logs[replica]) == 2, run.logs[replica][-3000:]
        assert final(run.logs[replica]) == final(whole.logs["chief-0"])
    assert printed(after, "replicas") == ["2"]
