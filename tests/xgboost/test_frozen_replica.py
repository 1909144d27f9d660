"""The fault matrix's representative frozen cell, in the default sessions: the XGBoost example
with its worker frozen (SIGSTOP) mid-training under the whole-job restart policy.

The chief's watchdog finds it waiting in XGBoost's allreduce within 30 s, the job
restarts, and every replica resumes from the last commit and trains every round
(tests/xgboost/test_fault_matrix.py has the other cells).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_cells import check_frozen
from report_page import check_job_report, written_report
from test_fault_matrix import FROZEN_CHECK, final, frozen_cell

pytestmark = pytest.mark.filterwarnings("ignore:.*Unknown file format")


def test_a_frozen_worker_is_found_and_the_job_resumes(tmp_path: Path) -> None:
    # A floor of 8 s, not the rehearsal's 20: a round takes 0.1 s, and the default sessions
    # wait 12 s less (the matrix's cells keep the defaults).
    run = frozen_cell(tmp_path, "freeze worker", "job", VTRAIN_STUCK_FLOOR="8")
    print(f"\nxgboost | freeze worker | job: {run.figures()}; ended {run.ended():.1f} s after")
    check_frozen(run, "job", **FROZEN_CHECK)
    assert "chief-0 was stuck (no progress for " in run.output, run.shown()
    assert "waiting for an XGBoost round (its allreduce with the other workers)" in run.output
    assert final(run)["rounds"] == 120
    # Its stacks are in the stuck replica's log, the line that names the wait on the console.
    assert "most recent call first" in (tmp_path / "replica-logs" / "chief-0.log").read_text()
    # `vtrain report` draws it: a lane per process, the freeze's mark, the goodput figure.
    check_job_report(written_report(tmp_path), tmp_path)
