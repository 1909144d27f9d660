"""What `handle.track(...).metrics` costs a training loop of 10 ms steps (issue 44).

    python bench/track_cost.py [--steps 300] [--runs 5]

Needs the local-mlflow extra. Starts a real MLflow tracking server (its SQLite store in
a temporary folder, on loopback, as `vtrain local run --track mlflow` does), then times
loops of --steps busy 10 ms steps side by side, taking turns, medians over --runs:

- alone: nothing logged;
- track, MLflow up: three metrics a step through `Track` to the server (the JSON Lines
  record beside it), as the leader logs them;
- mlflow.log_metrics: what a user would write instead, MLflow's own synchronous call,
  one request a step;
- track, MLflow down: the same `Track`, its server gone (a port nothing listens on).

Target: `Track` within 1% of the loop alone with the server up and down; the warnings
a down server gets are counted (one line, then backoff).
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "core"))

from vtrain.local.mlflow_server import TrackingServer  # noqa: E402 (after the path)
from vtrain.storage import open_location  # noqa: E402
from vtrain.track import Track  # noqa: E402
from vtrain.track.sinks import made  # noqa: E402

STEP = 0.010


def busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def loop(steps: int, log: object) -> float:
    start = time.perf_counter()
    for step in range(1, steps + 1):
        busy(STEP)
        if log is not None:
            log(step)  # type: ignore[operator]
    return time.perf_counter() - start


def track(folder: str, uri: str, run: str) -> Track:
    environ = {"MLFLOW_TRACKING_URI": uri}
    return Track(
        leader=True,
        run=run,
        folder=lambda: open_location(os.path.join(folder, run)),
        backends=made(("mlflow",), run, lambda: open_location(folder), environ),
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Count(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    import mlflow

    counted = Count()
    logging.getLogger("vtrain").addHandler(counted)
    with tempfile.TemporaryDirectory() as folder:
        server = TrackingServer.start(folder)
        try:
            os.environ["MLFLOW_TRACKING_URI"] = server.uri
            mlflow.set_experiment("bench")
            times: dict[str, list[float]] = {k: [] for k in ("alone", "up", "mlflow", "down")}
            for i in range(args.runs):
                times["alone"].append(loop(args.steps, None))
                up = track(folder, server.uri, f"up-{i}")
                times["up"].append(
                    loop(args.steps, lambda s, t=up: t.metrics({"a": s, "b": 0.5, "c": 1.0}, s))
                )
                up.close()
                with mlflow.start_run():
                    times["mlflow"].append(
                        loop(args.steps, lambda s: mlflow.log_metrics({"a": s, "b": 0.5}, step=s))
                    )
                down = track(folder, f"http://127.0.0.1:{free_port()}", f"down-{i}")
                before = len(counted.lines)
                times["down"].append(
                    loop(args.steps, lambda s, t=down: t.metrics({"a": s, "b": 0.5, "c": 1.0}, s))
                )
                down.close(timeout=1)
                said = len(counted.lines) - before
        finally:
            server.stop()
    alone = statistics.median(times["alone"])
    print(f"{args.steps} steps of {STEP * 1000:.0f} ms, medians of {args.runs} runs (seconds):")
    for name, label in (
        ("alone", "alone"),
        ("up", "track, MLflow up"),
        ("mlflow", "mlflow.log_metrics"),
        ("down", "track, MLflow down"),
    ):
        median = statistics.median(times[name])
        print(f"  {label:<22} {median:8.3f}  x{median / alone:.4f}")
    print(f"warning lines with the server down, per run: {said}")


if __name__ == "__main__":
    main()
