"""Speed of the tuning metric reporter and of the local study runner.

    python bench/hypertune.py [--reports 10000] [--trials 20] [--parallel 4] [--repeats 5]

1. N reports from one process, cloudml-hypertune against vtrain, side by side;
   vtrain twice: as it runs here (an exchange-and-unlink on Linux), and with plain
   rename-over (what it falls back to elsewhere).
2. A study of T trials of a no-op script, P at a time, against starting the same
   processes by hand, P at a time; the difference per trial is the runner's overhead.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

# This file is named like cloudml-hypertune's package, and Python puts its folder first on
# the path: drop that folder, or `import hypertune` would import this file.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

NOOP = "from vtrain.hypertune import report; report(1.0)"


def time_reports(
    n: int, folder: str, make_reporter: Callable[[str], Callable[[int], None]]
) -> float:
    """Seconds for n reports into a fresh metric file under `folder`."""
    reporter = make_reporter(os.path.join(folder, "output.metrics"))
    start = time.perf_counter()
    for i in range(n):
        reporter(i)
    return time.perf_counter() - start


def cloudml(path: str) -> Callable[[int], None]:
    import hypertune

    os.environ["CLOUD_ML_HP_METRIC_FILE"] = path
    writer = hypertune.HyperTune()
    return lambda i: writer.report_hyperparameter_tuning_metric("loss", i, global_step=i)


def vtrain(path: str, *, exchange: bool = True) -> Callable[[int], None]:
    from vtrain.hypertune import report
    from vtrain.storage import atomic

    if not exchange:
        # What vtrain does where renameat2 is missing (macOS, old kernels, some network file
        # systems); bench_reports puts the real function back.
        atomic._exchange = lambda source, target: False
    env = {"CLOUD_ML_HP_METRIC_FILE": path}
    return lambda i: report(i, "loss", i, environ=env) and None


def bench_reports(n: int) -> None:
    from vtrain.storage import atomic

    exchange = atomic._exchange
    results = {}
    with tempfile.TemporaryDirectory(dir=".") as root:
        for name, make in (
            ("cloudml-hypertune", cloudml),
            ("vtrain", vtrain),
            ("vtrain, rename-over only", lambda p: vtrain(p, exchange=False)),
        ):
            folder = tempfile.mkdtemp(dir=root)
            results[name] = time_reports(n, folder, make)
            atomic._exchange = exchange
            with open(os.path.join(folder, "output.metrics")) as f:
                assert len(f.readlines()) == min(n, 100)
    base = results["cloudml-hypertune"]
    print(f"{n} reports from one process (metric file on {os.path.abspath('.')}):")
    for name, seconds in results.items():
        print(
            f"  {name:26s} {seconds:7.2f} s  {seconds / n * 1e6:7.1f} us/report"
            f"  {base / seconds:5.1f}x cloudml-hypertune's speed"
        )


def by_hand(trials: int, parallel: int, root: str) -> float:
    """Seconds to run the no-op trial `trials` times, `parallel` at a time, by plain subprocess.

    Each process gets what the runner gives a trial (output to a log file, no stdin, a
    session of its own): a child writing to an inherited terminal or pipe starts slower.
    """

    def one(i: int) -> None:
        env = {**os.environ, "CLOUD_ML_HP_METRIC_FILE": os.path.join(root, f"{i}.metrics")}
        with open(os.path.join(root, f"{i}.log"), "ab") as log:
            subprocess.run(
                [sys.executable, "-c", NOOP],
                env=env,
                check=True,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
        list(pool.map(one, range(trials)))
    return time.perf_counter() - start


def by_runner(trials: int, parallel: int, root: str) -> float:
    from vtrain.tune.runner import StudyRunner
    from vtrain.tune.study_file import study_from_document

    study = study_from_document(
        {
            "metrics": [{"metric_id": "training/hptuning/metric", "goal": "MAXIMIZE"}],
            "parameters": [
                {"parameter_id": "x", "double_value_spec": {"min_value": 0, "max_value": 1}}
            ],
            "algorithm": "RANDOM_SEARCH",
            "max_trial_count": trials,
            "parallel_trial_count": parallel,
        }
    )
    # `python -c` ignores the --x=... flags after it, as a no-op script would.
    runner = StudyRunner(study, [sys.executable, "-c", NOOP], tempfile.mkdtemp(dir=root))
    start = time.perf_counter()
    result = runner.run()
    elapsed = time.perf_counter() - start
    assert [t.status for t in result.trials] == ["SUCCEEDED"] * trials
    return elapsed


def bench_study(trials: int, parallel: int, repeats: int) -> None:
    hand, tune = [], []
    with tempfile.TemporaryDirectory(dir=".") as root:
        for i in range(repeats):
            # Alternate which goes first: the machine is shared and its load drifts.
            for which in ("hand", "tune") if i % 2 == 0 else ("tune", "hand"):
                if which == "hand":
                    hand.append(by_hand(trials, parallel, tempfile.mkdtemp(dir=root)))
                else:
                    tune.append(by_runner(trials, parallel, root))
    h, t = statistics.median(hand), statistics.median(tune)
    print(f"study of {trials} no-op trials, {parallel} at a time (median of {repeats}):")
    print(f"  by hand          {h:6.2f} s  (subprocess.run from {parallel} threads)")
    print(f"  vtrain tune      {t:6.2f} s  overhead {(t - h) / trials * 1e3:+.1f} ms per trial")
    print(
        "  runs:",
        json.dumps({"hand": [round(x, 3) for x in hand], "tune": [round(x, 3) for x in tune]}),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    bench_reports(args.reports)
    bench_study(args.trials, args.parallel, args.repeats)


if __name__ == "__main__":
    main()
