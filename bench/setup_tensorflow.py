"""vtrain's TensorFlow setup against plain Keras and a hand-written TF_CONFIG, side by side.

    python bench/setup_tensorflow.py  # needs pip install -c tests/constraints.txt ".[tensorflow]"

1. Keras `fit` steps per second, one process: with vtrain's callbacks (BackupAndRestore,
   TensorBoard, the tuning metric) against the same fit with none (target >= 0.97x).
2. Seconds from launch to the first training step of a two-replica MultiWorkerMirrored
   job: `vtrain local run --workers 1` with configure(), against two processes started
   by hand with a hand-written TF_CONFIG (target <= 1.05x).
Runs are interleaved and repeated; medians are reported.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare import free_port, launch_by_hand, report

JOB = str(Path(__file__).resolve().parent / "scripts" / "keras_job.py")
ROUNDS = 9
QUIET = {"TF_CPP_MIN_LOG_LEVEL": "2"}


def value(pattern: str, output: str) -> float:
    found = re.findall(pattern + r" ([\d.]+)", output)
    if not found:
        raise SystemExit(f"no {pattern} in:\n{output[-3000:]}")
    return float(found[-1])


def fit(setup: str) -> float:
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            [sys.executable, JOB, setup, "fit"],
            env={
                **os.environ,
                **QUIET,
                "VTRAIN_OUTPUT_DIR": out,
                "CLOUD_ML_HP_METRIC_FILE": os.path.join(out, "m"),
            },
            capture_output=True,
            text=True,
        )
    return value("STEPS_PER_SECOND", done.stdout + done.stderr)


def first_step_vtrain() -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.time()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "vtrain",
                "local",
                "run",
                "--workers",
                "1",
                "--output-dir",
                out,
                "--",
                sys.executable,
                JOB,
                "vtrain",
                "first-step",
            ],
            env={**os.environ, **QUIET, "START": repr(start)},
            capture_output=True,
            text=True,
        )
    return max(float(v) for v in re.findall(r"FIRST_STEP ([\d.]+)", done.stdout))


def first_step_by_hand() -> float:
    chief, worker = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    cluster = {"chief": [chief], "worker": [worker]}
    start = repr(time.time())
    envs = [
        {
            **os.environ,
            **QUIET,
            "START": start,
            "TF_USE_LEGACY_KERAS": "1",
            "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": role, "index": 0}}),
        }
        for role in ("chief", "worker")
    ]
    _, outputs = launch_by_hand([sys.executable, JOB, "plain", "first-step"], envs)
    return max(value("FIRST_STEP", o) for o in outputs)


def main() -> None:
    speed: dict[str, list[float]] = {"with vtrain callbacks": [], "no callbacks": []}
    first: dict[str, list[float]] = {"vtrain local run + configure()": [], "hand-written": []}
    for _ in range(ROUNDS):
        speed["with vtrain callbacks"].append(fit("vtrain"))
        speed["no callbacks"].append(fit("plain"))
        first["vtrain local run + configure()"].append(first_step_vtrain())
        first["hand-written"].append(first_step_by_hand())
    report(
        "Keras fit, one process, steps per second",
        speed,
        unit="steps/s",
        ours="with vtrain callbacks",
        theirs="no callbacks",
        target=">= 0.97x",
    )
    report(
        "two-replica MWMS, seconds from launch to first step",
        first,
        unit="s",
        ours="vtrain local run + configure()",
        theirs="hand-written",
        target="<= 1.05x",
    )


if __name__ == "__main__":
    main()
