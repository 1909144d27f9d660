"""The fault matrix, measured: each cell's time to recover and work redone, against the targets.

    python bench/faults.py                       # PyTorch DDP and XGBoost, every cell
    python bench/faults.py --frameworks mxnet    # MXNet dist_sync (figures of worker 0)
    python bench/faults.py --frameworks tensorflow   # Keras MWMS and TF ParameterServerStrategy
    python bench/faults.py --frameworks xgboost --faults "preempt chief"

Runs the cells of tests/pytorch/test_fault_matrix.py (DDP),
tests/xgboost/test_fault_matrix.py, tests/mxnet/test_fault_matrix.py and
tests/tensorflow/test_fault_matrix.py (`tf-ps`: a coordinator, two workers and a
ps; `tf-mwms`: a chief and a worker; steps counted at each epoch's end), each
framework in its nox venv (.nox/framework-framework-<name>, else this
interpreter), and prints per cell:

- recover: seconds from the kill to the chief's first step after the resume;
  target: one replica's cold start (launch to first step, uninterrupted) + 5 s;
- redone: steps trained twice (reached before the kill, less the step resumed
  from); target: at most the commit interval;
- commit: seconds from a SIGTERM to its `committed step N` line; target: 10 s.

A figure over its target is marked `!`; the cell's outcome is `resumes` (the job
finished, resumed) or what stopped it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
COLD_MARGIN, COMMIT_TARGET = 5.0, 10.0


Group = tuple[str, list[tuple[str, str]], int, Callable[..., Any]]
"""A row label, its (fault, policy) cells, its commit interval and how to run one cell."""


def cells(framework: str) -> list[Group]:
    """The framework's groups of cells: one each, two for TensorFlow (PS and MWMS)."""
    # Each framework's test module defines its cells; all are named test_fault_matrix.
    sys.path.insert(0, str(ROOT / "tests" / framework))
    import test_fault_matrix as t  # type: ignore[import-not-found]  # on the path just above

    if framework == "pytorch":

        def run(out: Path, fault: str | None, policy: str) -> Any:
            return t.cell(out, fault, policy, t.DDP, t.DDP_START)

        return [(framework, t.CELLS, t.DDP_EVERY, run)]
    if framework == "mxnet":  # its cell also says how long after the kill the job ended

        def run_mxnet(out: Path, fault: str | None, policy: str) -> Any:
            return t.cell(out, fault, policy)[0]

        return [(framework, t.CELLS, t.PER_EPOCH, run_mxnet)]
    if framework == "tensorflow":  # a layout and a kill spec per cell; it also says the end

        def in_layout(layout: list[str], kills: dict[str, str]) -> Callable[..., Any]:
            def run_tf(out: Path, fault: str | None, policy: str) -> Any:
                return t.cell(out, layout, None if fault is None else kills[fault], policy)[0]

            return run_tf

        return [
            ("tf-ps", t.PS_CELLS, t.EVERY, in_layout(t.PS, t.PS_FAULTS)),
            ("tf-mwms", t.MWMS_CELLS, t.EVERY, in_layout(["--workers", "1"], t.FAULTS)),
        ]
    return [(framework, t.CELLS, t.EVERY, t.cell)]


def measure(framework: str, faults: list[str] | None) -> list[dict[str, Any]]:
    """Run each group's cold start and cells of `framework` here; one row per cell."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="vtrain-faults-") as scratch:
        for label, chosen, every, run in cells(framework):
            rows += measure_group(Path(scratch, label), label, chosen, every, run, faults)
    return rows


def measure_group(
    scratch: Path,
    label: str,
    chosen: list[tuple[str, str]],
    every: int,
    run: Callable[..., Any],
    faults: list[str] | None,
) -> list[dict[str, Any]]:
    """The group's cold start, then its cells (those of `faults`, if given)."""
    chosen = [(fault, policy) for fault, policy in chosen if not faults or fault in faults]
    rows: list[dict[str, Any]] = []
    if chosen:
        cold = run(scratch / "cold", None, "replica")
        for fault, policy in chosen:
            done = run(scratch / f"{fault}-{policy}".replace(" ", "-"), fault, policy)
            outcome = "resumes"
            if done.timed_out:
                outcome = "stops: hung (timed out)"
            elif done.returncode != 0:
                # The summary's reason (`job failed (exit status N): why`), not the verdict below.
                why = [ln for ln in done.output.splitlines() if ln.startswith("job failed")]
                last = why[-1] if why else done.output.strip().splitlines()[-1]
                outcome = f"stops: exit {done.returncode}: " + last.split(": ", 1)[-1]
            rows.append(
                {
                    "framework": label,
                    "fault": fault,
                    "policy": policy,
                    "outcome": outcome,
                    "cold": cold.first_step(),
                    "recover": done.recover(),
                    "redone": done.redone(),
                    "commit": done.commit(),
                    "every": every,
                }
            )
    return rows


def venv_python(framework: str) -> str:
    found = ROOT / ".nox" / f"framework-framework-{framework}" / "bin" / "python"
    return str(found) if found.exists() else sys.executable


def show(rows: list[dict[str, Any]]) -> None:
    print(
        f"{'framework':9}  {'fault':17}  {'policy':7}  {'recover (target)':20}  "
        f"{'redone (target)':16}  {'commit':9}  outcome"
    )
    for r in rows:
        cold, recover, redone, commit = r["cold"], r["recover"], r["redone"], r["commit"]
        target = None if cold is None else float(cold) + COLD_MARGIN
        rec = "-" if recover is None else f"{recover:.1f} s"
        if recover is not None and target is not None and float(recover) > target:
            rec += " !"
        rec += "" if target is None else f" ({target:.1f} s)"
        red = "-" if redone is None else f"{redone}"
        if redone is not None and int(redone) > int(r["every"]):
            red += " !"
        red += f" ({r['every']})"
        com = "-" if commit is None else f"{commit:.1f} s"
        if commit is not None and float(commit) > COMMIT_TARGET:
            com += " !"
        print(
            f"{r['framework']:9}  {r['fault']:17}  {r['policy']:7}  {rec:20}  {red:16}  "
            f"{com:9}  {r['outcome']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--frameworks",
        nargs="+",
        default=["pytorch", "xgboost"],
        choices=["pytorch", "xgboost", "mxnet", "tensorflow"],
    )
    parser.add_argument("--faults", nargs="+", help="only these faults (e.g. 'kill chief')")
    parser.add_argument("--here", help=argparse.SUPPRESS)  # one framework, in its venv: JSON out
    args = parser.parse_args()
    if args.here:
        print(json.dumps(measure(args.here, args.faults)))
        return
    rows: list[dict[str, Any]] = []
    for framework in args.frameworks:
        command = [venv_python(framework), __file__, "--here", framework]
        if args.faults:
            command += ["--faults", *args.faults]
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            sys.exit(f"{framework}: the cells did not run:\n{done.stderr[-3000:]}")
        rows += json.loads(done.stdout.strip().splitlines()[-1])
    show(rows)


if __name__ == "__main__":
    main()
