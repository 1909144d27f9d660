"""A straggler, rehearsed: `--slow` makes one of three independent trainers four times slower,
and the rehearsal names it once, on the console, in its own log and in the leader's.

The trainers are replicas/stepper.py: each steps on its own (no collective), as
trainers with asynchronous updates do; the job is not stopped for it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

STEPPER = str(Path(__file__).parent / "replicas" / "stepper.py")


def test_a_slowed_trainer_is_named_a_straggler_and_keeps_running(
    vtrain: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = vtrain(
        "--output-dir", str(out), "--workers", "2", "--slow", "worker:1@2:4",
        "--", sys.executable, STEPPER, "--steps", "300", "--delay", "0.05",
        timeout=120,
        VTRAIN_STRAGGLER_SECONDS="2",
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "--slow worker:1@2:4: worker-1 runs 1/4 of the time from now on" in output
    said = re.findall(r"^vtrain +\| (worker-1 is a straggler: .*)$", output, re.MULTILINE)
    assert len(said) == 1, output  # once
    rate, median = map(float, re.findall(r"([\d.]+) steps/s .* median of ([\d.]+)", said[0])[0])
    assert rate < 0.5 * median, said
    assert not re.search(r"(chief-0|worker-0) is a straggler", output)
    logs = out / "replica-logs"
    assert said[0] in (logs / "worker-1.log").read_text()
    assert said[0] in (logs / "chief-0.log").read_text()  # the leader's
    # Named, never stopped for it: it ran until the chief's success ended the job.
    assert re.search(r"^worker-1 +0 ", done.stdout, re.MULTILINE), output  # no restart
