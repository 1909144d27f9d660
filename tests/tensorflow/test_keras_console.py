"""The README's Keras job (five replicas) on the console: none of TensorFlow's native start-up
banner, all of it in the replica logs (`vtrain.local.noise`).

Started as a user starts it: TF_CPP_MIN_LOG_LEVEL unset. Each TensorFlow process
prints the banner as its native libraries load, before `configure()` can silence them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from cluster_run import EXAMPLES, clean_env

from vtrain.local.noise import NOISE

REPLICAS = ("chief-0", "worker-0", "worker-1", "ps-0", "evaluator-0")
# What every TensorFlow process here prints first, whatever the machine.
BANNER = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"


def test_the_five_replica_keras_job_shows_no_banner_line_and_logs_them_all(
    tmp_path: Path,
) -> None:
    env = clean_env()
    del env["TF_CPP_MIN_LOG_LEVEL"]
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "vtrain", "local", "run", "--output-dir", str(out)]
        + ["--workers", "2", "--ps", "1", "--evaluators", "1", "--"]
        + [sys.executable, str(EXAMPLES / "keras" / "train.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    console = done.stdout + done.stderr
    assert done.returncode == 0, console[-5000:]
    assert "verdict: ready to submit" in console
    logs = {name: (out / "replica-logs" / f"{name}.log").read_text() for name in REPLICAS}
    patterns = [pattern for _, pattern in NOISE]
    banner = {
        name: [line for line in log.splitlines() if any(p.match(line.encode()) for p in patterns)]
        for name, log in logs.items()
    }
    for name in REPLICAS:
        assert BANNER in banner[name], logs[name][-3000:]
        for line in banner[name]:
            assert line not in console
    shown = [line.partition("| ")[2] for line in console.splitlines()]
    assert not [line for line in shown if re.match(r"I\d{4} \d\d:\d\d:", line)], console
    assert not [line for line in shown if "absl::InitializeLog" in line], console
    assert "chief-0     | Epoch 5/5" in console  # the job's own lines stay
    assert console.count("triggered tf.function retracing") <= 1  # its repeats are noise
