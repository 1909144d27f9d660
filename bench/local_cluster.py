"""How much `vtrain local run` costs against a minimal hand-written launcher of the same processes.

    python bench/local_cluster.py [--replicas 8] [--runs 15]

Both launch the same plain-Python replicas: the chief listens, every other replica
connects to it once and then waits to be stopped; the chief exits when all have
connected, and the launcher then stops the rest. The hand-written launcher is
`subprocess.Popen` with a few environment variables, `wait()` on the chief and
`terminate()` for the others. Runs are interleaved; the figures are medians.

Targets (issue 3): vtrain's wall time at most 1.2x the hand-written launcher's, and
teardown of all replicas within 1 s of the chief's exit.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time

# The replica. It reads its role from CLUSTER_SPEC (vtrain) or from BENCH_* (the hand launcher).
REPLICA = r"""
import json, os, socket, sys, time
if "CLUSTER_SPEC" in os.environ:
    spec = json.loads(os.environ["CLUSTER_SPEC"])
    chief = spec["cluster"]["workerpool0"][0]
    is_chief = spec["task"]["type"] == "workerpool0"
    n = sum(len(a) for a in spec["cluster"].values())
else:
    chief, n = os.environ["BENCH_CHIEF"], int(os.environ["BENCH_N"])
    is_chief = os.environ["BENCH_RANK"] == "0"
host, port = chief.rsplit(":", 1)
if is_chief:
    with socket.create_server((host, int(port))) as s:
        for _ in range(n - 1):
            s.accept()[0].close()
    print("chief done", flush=True)
    with open(sys.argv[1], "w") as f:
        f.write(repr(time.time()))
    sys.exit(0)
while True:
    try:
        socket.create_connection((host, int(port))).close()
        break
    except OSError:
        time.sleep(0.01)
print("connected", flush=True)
time.sleep(3600)
"""


# The minimal launcher, run as `python -c HAND N STAMP REPLICA` so that it imports no more than
# it needs: free ports, Popen, wait for the chief, terminate the rest. Its replicas get sessions
# of their own as vtrain's do: on a busy machine the kernel's autogroup scheduler gives each
# session its own share of the CPU, which would otherwise favour vtrain.
HAND = r"""
import os, socket, subprocess, sys
n, stamp, replica = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ports = []
for _ in range(n):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        ports.append(s.getsockname()[1])
procs = []
for rank in range(n):
    env = dict(os.environ, BENCH_CHIEF=f"127.0.0.1:{ports[0]}", BENCH_RANK=str(rank))
    env["BENCH_N"] = str(n)
    procs.append(subprocess.Popen([sys.executable, "-c", replica, stamp], env=env,
                                  start_new_session=True))
status = procs[0].wait()
for p in procs[1:]:
    p.terminate()
for p in procs[1:]:
    p.wait()
sys.exit(status)
"""


def measure(cmd: list[str], stamp: str) -> tuple[float, float]:
    """(wall seconds of the launcher, seconds from the chief's exit to the launcher's)."""
    start = time.time()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    end = time.time()
    if done.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed: {done.stderr}")
    with open(stamp) as f:
        chief_exit = float(f.read())
    return end - start, end - chief_exit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=8)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    # Byte-compile vtrain as a wheel install does; without it (PYTHONDONTWRITEBYTECODE) every
    # run would compile vtrain from source and the bench would measure the compiler.
    import vtrain

    compileall.compile_dir(os.path.dirname(vtrain.__file__), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        stamp = os.path.join(tmp, "chief-exit")
        launchers = {
            "hand-written": [sys.executable, "-c", HAND, str(args.replicas), stamp, REPLICA],
            "vtrain local run": [
                sys.executable,
                "-m",
                "vtrain",
                "local",
                "run",
                "--workers",
                str(args.replicas - 1),
                "--output-dir",
                os.path.join(tmp, "out"),
                "--",
                sys.executable,
                "-c",
                REPLICA,
                stamp,
            ],
        }
        walls: dict[str, list[float]] = {name: [] for name in launchers}
        teardowns: dict[str, list[float]] = {name: [] for name in launchers}
        for _ in range(args.runs):
            for name, cmd in launchers.items():
                wall, teardown = measure(cmd, stamp)
                walls[name].append(wall)
                teardowns[name].append(teardown)

    print(
        f"{args.replicas} replicas, {args.runs} interleaved runs, medians ({os.cpu_count()} cores)"
    )
    print(f"{'launcher':<18} {'wall':>9} {'teardown':>10} {'worst teardown':>15}")
    for name in launchers:
        print(
            f"{name:<18} {statistics.median(walls[name]) * 1000:7.0f} ms "
            f"{statistics.median(teardowns[name]) * 1000:7.0f} ms "
            f"{max(teardowns[name]) * 1000:12.0f} ms"
        )
    ratio = statistics.median(walls["vtrain local run"]) / statistics.median(walls["hand-written"])
    worst = max(teardowns["vtrain local run"])
    print(
        f"ratio vtrain / hand-written: {ratio:.2f}x (target <= 1.2x); "
        f"worst vtrain teardown {worst * 1000:.0f} ms (target <= 1000 ms)"
    )


if __name__ == "__main__":
    main()
