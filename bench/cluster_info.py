"""How much vtrain's cluster reading costs: start-up against a bare interpreter and the SDK reader,
and parsing time for very large CLUSTER_SPECs.

    python bench/cluster_info.py [--sdk-python PYTHON]

The SDK column needs google-cloud-aiplatform. Installing it adds a namespace-package
hook that slows every interpreter start in that environment, so measure vtrain in a
venv without it and point --sdk-python at an interpreter that has the SDK.

Targets (issue 2): vtrain adds <= 20 ms to a bare interpreter and is >= 50x faster than the
SDK's `training_utils.environment_variables`; a 10,000-replica CLUSTER_SPEC parses in <= 50 ms,
growing linearly.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

RUNS = 21

SPEC = {
    "cluster": {
        "workerpool0": ["cmle-training-workerpool0-ab-0:2222"],
        "workerpool1": [f"cmle-training-workerpool1-ab-{i}:2222" for i in range(4)],
    },
    "environment": "cloud",
    "task": {"type": "workerpool1", "index": 2, "trial": ""},
    "job": {"workerPoolSpecs": [{}, {}]},
}

COMMANDS = {
    "python -c pass": "pass",
    "vtrain ClusterInfo.from_env()": "import vtrain; vtrain.ClusterInfo.from_env()",
    "aiplatform SDK environment_variables": (
        "from google.cloud.aiplatform.training_utils import environment_variables as e; "
        "e.cluster_spec"
    ),
}


def start_up(sdk_python: str) -> dict[str, float]:
    """Median wall time in ms of each command in a fresh interpreter, runs interleaved."""
    # An installed wheel ships byte-code; a source checkout under PYTHONDONTWRITEBYTECODE
    # would recompile vtrain on every run and measure the compiler instead.
    import compileall

    import vtrain

    compileall.compile_dir(os.path.dirname(vtrain.__file__), quiet=1)
    env = dict(os.environ, CLUSTER_SPEC=json.dumps(SPEC))
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(RUNS):
        for name, code in COMMANDS.items():
            t = time.perf_counter()
            python = sdk_python if name.startswith("aiplatform") else sys.executable
            done = subprocess.run([python, "-c", code], env=env, capture_output=True)
            elapsed = (time.perf_counter() - t) * 1000
            if done.returncode != 0:
                times[name] = []
                break
            times[name].append(elapsed)
    return {name: statistics.median(t) for name, t in times.items() if t}


def parse_time(replicas: int) -> float:
    """Best-of-5 ms to parse a CLUSTER_SPEC of `replicas` workers and derive every property."""
    from vtrain import ClusterInfo

    spec = json.dumps(
        {
            "cluster": {
                "workerpool0": ["chief-0:2222"],
                "workerpool1": [f"worker-{i}.svc.local:2222" for i in range(replicas - 1)],
            },
            "task": {"type": "workerpool1", "index": replicas - 2},
        }
    )
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        info = ClusterInfo.from_env({"CLUSTER_SPEC": spec})
        info.to_dict()
        best = min(best, time.perf_counter() - t)
    assert info.rank == replicas - 1
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdk-python", default=sys.executable, help="a Python with the SDK")
    medians = start_up(parser.parse_args().sdk_python)
    bare = medians["python -c pass"]
    print(f"start-up in a fresh interpreter (median of {RUNS}, ms):")
    for name, ms in medians.items():
        print(f"  {name:<40}{ms:8.1f}")
    ours = medians["vtrain ClusterInfo.from_env()"]
    print(f"  vtrain adds {ours - bare:.1f} ms to a bare interpreter (target <= 20 ms)")
    sdk = medians.get("aiplatform SDK environment_variables")
    if sdk is None:
        print("  (google-cloud-aiplatform not installed: SDK column skipped)")
    else:
        print(
            f"  SDK / vtrain: {sdk / ours:.1f}x in wall time; "
            f"{(sdk - bare) / max(ours - bare, 1e-9):.0f}x in time added (target >= 50x)"
        )
    print("parsing a CLUSTER_SPEC and deriving everything (best of 5, ms):")
    previous = None
    for n in (1_000, 10_000, 100_000):
        ms = parse_time(n)
        growth = f"  x{ms / previous:.1f} for 10x replicas" if previous else ""
        print(f"  {n:>7} replicas {ms:8.2f}{growth}")
        previous = ms


if __name__ == "__main__":
    main()
