"""vtrain's XGBoost setup against the same script with a hand-started tracker, side by side.

    python bench/setup_xgboost.py        # needs xgboost (pip install ".[xgboost]")

Two trainers (the machines here have 2 cores), one thread each, launched the
same minimal way on both sides (`compare.launch_by_hand`):
  vtrain:  MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK as Kubeflow's XGBoostJob sets them;
           configure() (the chief hosts the tracker, the worker waits for it) and its
           callbacks: a checkpoint every 10 rounds, the tuning metric every round.
  by hand: a RabitTracker started here before the launch, DMLC_* variables, no callbacks.
1. Boosting rounds per second after warm-up (target: >= 0.97x).
2. Launch to the end of the first round, tracker start included (target: <= 1.05x).
Runs are interleaved and repeated; medians are reported.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from pathlib import Path

from compare import free_port, launch_by_hand, report

# This file's name hides the xgboost package from its own folder, first on sys.path.
sys.path.remove(str(Path(__file__).resolve().parent))
from xgboost.tracker import RabitTracker  # noqa: E402

JOB = str(Path(__file__).resolve().parent / "scripts" / "xgboost_job.py")
REPEATS = int(os.environ.get("REPEATS", "7"))
WORLD = 2


def number(name: str, output: str) -> float:
    found = re.findall(rf"{name} ([\d.]+)", output)
    if not found:
        raise SystemExit(f"no {name} in:\n{output}")
    return float(found[-1])


def with_vtrain() -> str:
    port = str(free_port())
    with tempfile.TemporaryDirectory() as out:
        launched = str(time.time())
        envs = [
            {
                **os.environ,
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": port,
                "WORLD_SIZE": str(WORLD),
                "RANK": str(r),
                "VTRAIN_OUTPUT_DIR": out,
                "CLOUD_ML_HP_METRIC_FILE": f"{out}/metrics-{r}",
                "LAUNCHED_AT": launched,
            }
            for r in range(WORLD)
        ]
        _, outputs = launch_by_hand([sys.executable, JOB, "vtrain"], envs)
    return outputs[0]


def by_hand() -> str:
    launched = str(time.time())
    tracker = RabitTracker(n_workers=WORLD, host_ip="127.0.0.1", port=free_port(), sortby="task")
    tracker.start()
    uri = tracker.worker_args()
    envs = [
        {
            **os.environ,
            "DMLC_TRACKER_URI": str(uri["dmlc_tracker_uri"]),
            "DMLC_TRACKER_PORT": str(uri["dmlc_tracker_port"]),
            "DMLC_TASK_ID": str(r),
            "LAUNCHED_AT": launched,
        }
        for r in range(WORLD)
    ]
    _, outputs = launch_by_hand([sys.executable, JOB, "plain"], envs)
    tracker.wait_for()
    tracker.free()
    return next(o for o in outputs if "ROUNDS_PER_SECOND" in o)


def main() -> None:
    speed: dict[str, list[float]] = {
        "vtrain configure() + callbacks": [],
        "hand-started tracker": [],
    }
    launch: dict[str, list[float]] = {
        "vtrain configure() + callbacks": [],
        "hand-started tracker": [],
    }
    for i in range(REPEATS):
        # Alternate who goes first: the page cache and CPU clocks favour the second run.
        sides = [("vtrain configure() + callbacks", with_vtrain), ("hand-started tracker", by_hand)]
        for name, run in sides if i % 2 == 0 else sides[::-1]:
            output = run()
            speed[name].append(number("ROUNDS_PER_SECOND", output))
            launch[name].append(number("LAUNCH_TO_FIRST_ROUND", output))
    report(
        "XGBoost, 2 trainers, boosting rounds per second",
        speed,
        unit="rounds/s",
        ours="vtrain configure() + callbacks",
        theirs="hand-started tracker",
        target=">= 0.97x",
    )
    report(
        "XGBoost, 2 trainers, launch to the end of round 1",
        launch,
        unit="s",
        ours="vtrain configure() + callbacks",
        theirs="hand-started tracker",
        target="<= 1.05x",
    )


if __name__ == "__main__":
    main()
