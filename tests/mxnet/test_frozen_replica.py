"""The fault matrix's representative frozen cell, in the default sessions: the MXNet example
(two workers, a server, the chief scheduling) with worker 0 frozen (SIGSTOP) mid-training
under the whole-job restart policy.

Worker 1's watchdog finds it waiting in the kvstore within 30 s, the job restarts, and
both workers resume from the last epoch committed, to the same parameters
(tests/mxnet/test_fault_matrix.py has the other cells).
"""

from __future__ import annotations

from pathlib import Path

from fault_cells import check_frozen
from report_page import check_job_report, written_report
from test_fault_matrix import FROZEN_CHECK, cell, params


def test_a_frozen_worker_is_found_and_the_job_resumes(tmp_path: Path) -> None:
    # A floor of 8 s, not the rehearsal's 20: a step takes 0.3 s, and the default sessions
    # wait 12 s less (the matrix's cells keep the defaults).
    run, took = cell(tmp_path, "freeze worker", "job", VTRAIN_STUCK_FLOOR="8")
    print(f"\nmxnet dist_sync | freeze worker | job: {run.figures()}; ended {took:.1f} s after")
    check_frozen(run, "job", **FROZEN_CHECK)
    assert "worker-1 was stuck (no progress for " in run.output, run.shown()
    assert "waiting for MXNet (a kvstore push or pull, or the engine)" in run.output
    assert params(run, "worker-1") == params(run, "worker-0")
    # Its stacks are in the stuck replica's log, the line that names the wait on the console.
    assert "most recent call first" in (tmp_path / "replica-logs" / "worker-1.log").read_text()
    # `vtrain report` draws it: a lane per process, the freeze's mark, the goodput figure.
    check_job_report(written_report(tmp_path), tmp_path)
