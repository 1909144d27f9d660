"""A worker restarted alone cannot rejoin a running ps-lite job: the job stops and says so.

Without `--restart-job-on-worker-restart` (Vertex's default policy) the
restarted worker used to wait forever for a barrier its peers had passed, and
the job hung in silence. The scheduler, the MXNet plugin's service, says why
in its serving file; `vtrain local run` reads it at the failure and stops.
"""

from __future__ import annotations

import time
from pathlib import Path

from cluster_run import local_run
from test_cluster import DIES_ONCE

import vtrain

REASON = "MXNet workers cannot rejoin a running ps-lite job"


def test_the_mxnet_plugin_declares_that_its_jobs_restart_whole() -> None:
    assert vtrain.plugins.get("mxnet").job_restarts == REASON


def test_a_worker_lost_mid_job_stops_the_job_with_the_reason_instead_of_hanging(
    tmp_path: Path,
) -> None:
    start = time.monotonic()
    run = local_run(
        tmp_path / "out",
        ["--workers", "2", "--ps", "1"],
        [DIES_ONCE, "--epochs", "6", "--steps-per-epoch", "5"],
        timeout=120,
        DIE_AFTER="2",
    )
    took = time.monotonic() - start
    assert run.returncode == 137, run.output  # the worker's SIGKILL, as a shell says it
    said = (
        f"worker-0 exited with SIGKILL: {REASON}, so restart the whole job "
        "(--restart-job-on-worker-restart here, scheduling.restartJobOnWorkerRestart on Vertex)"
    )
    assert f"vtrain   | {said}" in run.output
    assert f"job failed (exit status 137): {said}" in run.output
    assert "restart 1 of" not in run.output
    print(f"\nthe job stopped {took:.1f} s after its start (a hang ran into the 120 s timeout)")
