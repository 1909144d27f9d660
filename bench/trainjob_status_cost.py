"""What posting a TrainJob's status costs a training loop (issue 43): up, refusing, gone, slow.

    python bench/trainjob_status_cost.py [--steps 300] [--runs 3] [--every 0.2]

A loop of --steps busy 10 ms steps, each marked in the progress tracker (as the
plugins' helpers mark them), timed alone and beside vtrain's status reporter posting
every --every seconds (25 times more often than its 5 s default, to make any cost
show) to the test suite's Kubeflow Trainer status stand-in (real TLS, the token
checked), in four states: up, refusing every post (403), stopped (connection
refused), and throttled (each answer held 2 s). Medians over --runs, the loops taking
turns. Target: every loop within 1% of the loop alone.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "core"))
sys.path.insert(0, str(ROOT / "tests"))

from trainjob_status_server import StatusServer, start  # noqa: E402 (after the path)

from vtrain.progress import tracker  # noqa: E402
from vtrain.progress.tracker import fresh  # noqa: E402
from vtrain.trainjob.status_reporter import StatusReporter  # noqa: E402

STEP = 0.010


def loop(steps: int) -> float:
    fresh()
    tracker().total = steps
    began = time.perf_counter()
    for step in range(1, steps + 1):
        end = time.perf_counter() + STEP
        while time.perf_counter() < end:
            pass
        tracker().stepped(step, explicit=True)
    return time.perf_counter() - began


def beside(state: StatusServer, url: str, steps: int, every: float) -> tuple[float, int]:
    reporter = StatusReporter(url, str(state.ca_file), str(state.token_file), every=every)
    reporter.start()
    took = loop(steps)
    reporter._stop.set()  # no last post: only the loop's time is measured
    return took, reporter.posted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--every", type=float, default=0.2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        state, server = start(Path(scratch))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            gone = f"https://127.0.0.1:{s.getsockname()[1]}/status"
        (Path(scratch) / "slow").mkdir()
        slow_state, slow = start(Path(scratch) / "slow")
        slow.RequestHandlerClass.do_POST = _held(slow.RequestHandlerClass.do_POST)
        times: dict[str, list[float]] = {k: [] for k in ("alone", "up", "refusing", "gone", "slow")}
        posts: dict[str, int] = {}
        for _ in range(args.runs):
            times["alone"].append(loop(args.steps))
            state.refuse_with = None
            took, posts["up"] = beside(state, state.url, args.steps, args.every)
            times["up"].append(took)
            state.refuse_with = 403
            took, posts["refusing"] = beside(state, state.url, args.steps, args.every)
            times["refusing"].append(took)
            took, posts["gone"] = beside(state, gone, args.steps, args.every)
            times["gone"].append(took)
            took, posts["slow"] = beside(slow_state, slow_state.url, args.steps, args.every)
            times["slow"].append(took)
        for running in (server, slow):
            running.shutdown()
            running.server_close()
    alone = statistics.median(times["alone"])
    print(
        f"{args.steps} steps of {STEP * 1000:.0f} ms, a post every {args.every:g} s, "
        f"medians of {args.runs} runs:"
    )
    for name, median in ((k, statistics.median(v)) for k, v in times.items()):
        went = f"  ({posts[name]} posts went through)" if name in posts else ""
        print(f"  {name:<9} {median:7.3f} s  x{median / alone:.4f}{went}")


def _held(post: object) -> object:
    def held(self: object) -> None:
        time.sleep(2.0)
        post(self)  # type: ignore[operator]

    return held


if __name__ == "__main__":
    main()
