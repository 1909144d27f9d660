"""The fault matrix's representative frozen cell, in the default sessions: the Keras example
under MultiWorkerMirroredStrategy with its worker frozen (SIGSTOP) mid-training, under the
whole-job restart policy.

TensorFlow's coordination service misses the frozen worker's heartbeats and fails the
chief within about 10 s, before the chief's watchdog would (20 s); the job restarts,
the frozen worker with it, and both resume from the last epoch committed
(tests/tensorflow/test_fault_matrix.py has the other cells).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_cells import check_frozen
from report_page import check_job_report, written_report
from test_fault_matrix import (
    FROZEN_CHECK,
    FROZEN_ENV,
    FROZEN_OPTIONS,
    TF_FREEZES,
    TRUE_WEIGHTS,
    cell,
    weights,
)

pytestmark = pytest.mark.timeout(400)


def test_a_frozen_worker_is_found_and_the_job_resumes(tmp_path: Path) -> None:
    layout = ["--workers", "1"]
    freeze = TF_FREEZES["freeze worker"]
    run, took = cell(tmp_path, layout, freeze, "job", *FROZEN_OPTIONS["job"], **FROZEN_ENV)
    print(f"\nkeras mwms | freeze worker | job: {run.figures()}; ended {took:.1f} s after")
    check_frozen(run, "job", watchdog=False, **FROZEN_CHECK)
    assert "worker-0 stopped (SIGKILL)" in run.output, run.shown()  # the hung machine, deleted
    assert weights(run, "chief-0")[:8] == pytest.approx(TRUE_WEIGHTS, abs=0.1)
    assert weights(run, "worker-0") == weights(run, "chief-0")
    # `vtrain report` draws it: a lane per process, the freeze's mark, the goodput figure.
    check_job_report(written_report(tmp_path), tmp_path)
