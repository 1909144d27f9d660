"""Side-by-side reporting shared by the benchmarks: medians, and the ratio against the baseline."""

from __future__ import annotations

import statistics
from collections.abc import Mapping


def report(
    title: str,
    results: Mapping[str, list[float]],
    *,
    unit: str,
    ours: str,
    theirs: str,
    target: str,
    paired: bool = False,
) -> float:
    """Print each contender's median and `ours / theirs`; return that ratio.

    `paired`: the i-th values of every contender come from one round, run back to
    back; the ratio is then the median of the rounds' own ratios, which a machine
    whose speed drifts between rounds moves less than a ratio of medians.
    """
    runs = min(len(v) for v in results.values())
    print(f"{title} (median of {runs}):")
    for name, values in results.items():
        print(f"  {name:<34}{statistics.median(values):9.2f} {unit}")
    return report_ratio(results, ours=ours, theirs=theirs, target=target, paired=paired)


def report_ratio(
    results: Mapping[str, list[float]], *, ours: str, theirs: str, target: str, paired: bool = False
) -> float:
    """Print `ours / theirs` alone (another line under a `report`); return it."""
    if paired:
        pairs = zip(results[ours], results[theirs], strict=True)
        ratio = statistics.median(a / b for a, b in pairs)
        how = "median of the rounds' ratios"
    else:
        ratio = statistics.median(results[ours]) / statistics.median(results[theirs])
        how = "ratio of the medians"
    print(f"  {ours} / {theirs}: {ratio:.3f}x, {how} (target {target})")
    return ratio


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch_by_hand(command: list[str], envs: list[dict[str, str]]) -> tuple[float, list[str]]:
    """Run `command` once per environment, the minimal hand-written way; wait for all.

    Each process gets a session and a log file, as `vtrain local run`'s replicas do,
    so that only the setup differs between the two sides (on 2 cores a shared session
    and undrained pipes change the timings by more than vtrain does). Returns the wall
    seconds and each process's output.
    """
    import subprocess
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as out:
        logs = [open(f"{out}/{i}.log", "w+") for i in range(len(envs))]  # noqa: SIM115
        start = time.perf_counter()
        procs = [
            subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            for env, log in zip(envs, logs, strict=True)
        ]
        for p in procs:
            p.wait()
        elapsed = time.perf_counter() - start
        outputs = []
        for log in logs:
            log.seek(0)
            outputs.append(log.read())
            log.close()
    return elapsed, outputs
