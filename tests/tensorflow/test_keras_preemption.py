"""Preempt one replica of a real MultiWorkerMirrored Keras job: every worker commits, all resume.

`--kill ROLE:0@T:TERM` is a preemption notice. The replica that gets it holds
at a fixed batch until it comes (`--hold-for-term`), so what is committed does
not depend on the clock: TensorFlow's PreemptionCheckpointHandler makes every
worker save at the next batch (step 20), every worker exits 143, each is
restarted alone (Vertex's default) and resumes from that step.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cluster_run import local_run
from test_keras_resume import JOB, final, printed, resumed_at, started_at

# Epochs 1-2 (8 batches each), 3 batches into epoch 3, the hold; the save is one batch on.
COMMITTED = 20
# After the hold begins on a busy machine (the first run starts TensorFlow twice over).
KILL_AT = 35


@pytest.mark.faults
@pytest.mark.timeout(420)
@pytest.mark.parametrize("role", ["chief", "worker"])
def test_a_preempted_replica_commits_with_every_worker_and_the_job_resumes(
    tmp_path: Path, role: str
) -> None:
    run = local_run(
        tmp_path,
        ["--workers", "1", "--kill", f"{role}:0@{KILL_AT}:TERM"],
        [JOB, "--hold-for-term", "2:3", "--hold-role", role],
    )
    assert run.returncode == 0, run.output
    # A save on the signalled worker alone aborted the chief's collectives.
    assert "Shape mismatch" not in run.output and "Traceback" not in run.output, run.output
    name = f"{role}-0"
    before, _, _ = run.logs[name].partition(f"sending SIGTERM to {name}")
    assert "holding for SIGTERM at (2, 3)" in before, "the notice must land while it holds"
    assert f"{name} preempted (SIGTERM): committed step {COMMITTED}; restart 1" in run.output
    for replica in ("chief-0", "worker-0"):
        (committed,) = printed(run.logs[replica], "vtrain: preempted (SIGTERM): committed step")
        assert committed.startswith(f"{COMMITTED} (epoch 3, with every worker)")
        # Epoch 3 starts over from the state 4 batches into it: Adam counted those.
        assert started_at(run.logs[replica]) == 2
        assert final(run.logs[replica])[1] == 6 * 8 + 4
    assert final(run.logs["chief-0"]) == final(run.logs["worker-0"])
    assert resumed_at(run.logs["chief-0"]) == 2  # the leader's one resume line
    (line,) = printed(run.logs[name], "vtrain: preempted (SIGTERM): committed step")
    (seconds,) = re.findall(r", ([\d.]+) s after the signal", line)
    print(f"\n{name}: SIGTERM -> commit {seconds} s (with every worker)")
    assert float(seconds) < 10, f"{name} took {seconds} s of the 30 s notice to commit"
