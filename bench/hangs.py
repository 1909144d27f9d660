"""Hangs, measured: a frozen replica's detection and resume per framework, and the watchdog's cost.

    python bench/hangs.py                        # the cost, then PyTorch DDP's frozen cells
    python bench/hangs.py --frameworks xgboost mxnet tensorflow
    python bench/hangs.py --cost-only

The cells are the frozen-replica cells of tests/<framework>/test_fault_matrix.py
(`FROZEN`, `frozen_cell`), each run in its framework's nox venv
(.nox/framework-framework-<name>, else this interpreter). Per cell:

- detect: seconds from the freeze (SIGSTOP) to the first watchdog's line; target:
  the bound (20 s in a rehearsal, or 10 x the median step) + 5 s;
- recover: seconds from the freeze to the chief's first step after the resume; target:
  the detection + one replica's cold start (launch to first step) + 10 s;
- redone: steps trained twice.

The cost: a loop of 10 ms steps (a sleep: the step's work does not matter, its length
does), timed with no watchdog, then with `handle.step()` each step and the watchdog's
thread looking once a second, alternately, 5 rounds; target: at most 1 % slower.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
STEP, STEPS, ROUNDS = 0.010, 300, 5
BOUND, DETECT_MARGIN, RECOVER_MARGIN = 20.0, 5.0, 10.0


def loop(watched: bool) -> float:
    """Seconds of STEPS steps of STEP, with the handle's step mark and the watchdog or not."""
    from vtrain.cluster import ClusterInfo
    from vtrain.plugins.handle import Handle

    handle = Handle(ClusterInfo.from_env({}), is_leader=True)
    started = time.perf_counter()
    for _ in range(STEPS):
        time.sleep(STEP)
        if watched:
            handle.step()
    return time.perf_counter() - started


def cost() -> None:
    from vtrain.progress.watchdog import unwatch, watch

    bare, marked = [], []
    with tempfile.TemporaryDirectory() as folder:
        env = {"VTRAIN_WATCHDOG": "on", "VTRAIN_PROGRESS_FILE": os.path.join(folder, "p")}
        for _ in range(ROUNDS):
            bare.append(loop(False))
            watch(env, launched=True)
            marked.append(loop(True))
            unwatch()
    b, m = sorted(bare)[ROUNDS // 2], sorted(marked)[ROUNDS // 2]
    ratio = m / b
    flag = "" if ratio <= 1.01 else " !"
    print(
        f"cost: {STEPS} steps of {STEP * 1000:.0f} ms: bare {b:.3f} s, marked and watched "
        f"{m:.3f} s: {ratio:.4f}x (target 1.01x){flag}"
    )


def cells(framework: str, out: Path) -> list[dict[str, Any]]:
    """Run the framework's frozen cells here (in its venv): their figures."""
    sys.path.insert(0, str(ROOT / "tests" / framework))
    import test_fault_matrix as t  # type: ignore[import-not-found]  # on the path just above

    rows = []
    for entry in getattr(t, "FROZEN", []):
        fault, policy = entry[-2:]  # TensorFlow's name the layout first
        run = t.frozen_cell(out / f"{fault}-{policy}".replace(" ", "-"), fault, policy)
        rows.append(
            {
                "framework": framework,
                "fault": fault,
                "policy": policy,
                "outcome": "resumes" if run.returncode == 0 else f"stops ({run.returncode})",
                "detect": run.detect(),
                "recover": run.recover(),
                "redone": run.redone(),
                "cold": run.first_step(),
            }
        )
    return rows


def show(rows: list[dict[str, Any]]) -> None:
    print(
        f"{'framework':10} {'fault':14} {'policy':8} {'outcome':12} {'detect':>9} "
        f"{'recover (target)':>18} {'redone':>7}"
    )
    for r in rows:
        detect, recover, cold = r["detect"], r["recover"], r["cold"]
        d = (
            "-"
            if detect is None
            else f"{detect:.1f} s" + ("!" if detect > BOUND + DETECT_MARGIN else "")
        )
        target = None if detect is None or cold is None else detect + cold + RECOVER_MARGIN
        rec = "-" if recover is None else f"{recover:.1f} s"
        if recover is not None and target is not None and recover > target:
            rec += "!"
        rec += "" if target is None else f" ({target:.0f} s)"
        redone = "-" if r["redone"] is None else str(r["redone"])
        print(
            f"{r['framework']:10} {r['fault']:14} {r['policy']:8} {r['outcome']:12} {d:>9} "
            f"{rec:>18} {redone:>7}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", nargs="*", default=["pytorch"])
    parser.add_argument("--cost-only", action="store_true")
    parser.add_argument("--cells-of", help=argparse.SUPPRESS)  # one framework, in its venv
    args = parser.parse_args()
    if args.cells_of:
        with tempfile.TemporaryDirectory() as out:
            print(json.dumps(cells(args.cells_of, Path(out))))
        return
    cost()
    if args.cost_only:
        return
    rows: list[dict[str, Any]] = []
    for framework in args.frameworks:
        venv = ROOT / ".nox" / f"framework-framework-{framework}" / "bin" / "python"
        python = str(venv) if venv.exists() else sys.executable
        done = subprocess.run(
            [python, __file__, "--cells-of", framework],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if done.returncode != 0:
            print(f"{framework}: the cells did not run:\n{done.stderr[-2000:]}")
            continue
        rows += json.loads(done.stdout.splitlines()[-1])
    show(rows)


if __name__ == "__main__":
    main()
