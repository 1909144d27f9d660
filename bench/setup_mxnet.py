"""vtrain's MXNet setup against the same job with the DMLC_* variables set by hand, side by side.

    python bench/setup_mxnet.py        # needs mxnet (pip install ".[mxnet]")

A scheduler, one server and two workers on 127.0.0.1, started the same minimal way
(bench/compare.py's launch_by_hand): on one side each replica gets a Vertex
CLUSTER_SPEC and calls configure(); on the other, DMLC_ROLE & co. by hand.
The hand-set side runs MXNet's defaults throughout; a third side sets by hand the one
engine vtrain chooses (the serial engine on the servers, vtrain_mxnet/service.py).
1. Gluon dist_sync steps per second on a worker (target: >= 0.98x).
2. Launch to the end of the first step (target: <= 1.05x), and a worker's CPU seconds
   until then (its own work only, not how 4 processes shared the cores).
Runs are interleaved and repeated; each ratio is the median of the rounds' ratios.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

from compare import free_port, launch_by_hand, report

JOB = str(Path(__file__).resolve().parent / "scripts" / "mxnet_job.py")
ROUNDS = 15
STEPS = 600  # timed steps per worker: about 4 s, long enough to even out this machine's noise
SERIAL = "NaiveEngine"  # what vtrain_mxnet.service gives a server
POOLS = (
    ("workerpool0", "scheduler"),
    ("workerpool2", "server"),
    ("workerpool1", "worker"),
    ("workerpool1", "worker"),
)


def _base() -> dict[str, str]:
    # Neither side may inherit a cluster, nor an engine choice that favours one.
    drop = ("CLUSTER_SPEC", "TF_CONFIG", "MXNET_ENGINE_TYPE", "VTRAIN_LEADER")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("DMLC_")}


def vtrain_envs() -> list[dict[str, str]]:
    cluster: dict[str, list[str]] = {}
    for pool, _ in POOLS:
        cluster.setdefault(pool, []).append(f"127.0.0.1:{free_port()}")
    envs, seen = [], {}
    for pool, _ in POOLS:
        index = seen[pool] = seen.get(pool, -1) + 1
        spec = {"cluster": cluster, "task": {"type": pool, "index": index}}
        envs.append({**_base(), "CLUSTER_SPEC": json.dumps(spec)})
    return envs


def hand_set_envs(**server: str) -> list[dict[str, str]]:
    """DMLC_* by hand; `server` adds variables to the server's environment only."""
    port = str(free_port())
    common = {
        "DMLC_PS_ROOT_URI": "127.0.0.1",
        "DMLC_PS_ROOT_PORT": port,
        "DMLC_NUM_SERVER": "1",
        "DMLC_NUM_WORKER": "2",
    }
    return [
        {**_base(), **common, "DMLC_ROLE": role, **(server if role == "server" else {})}
        for _, role in POOLS
    ]


def run(mode: str, envs: list[dict[str, str]]) -> tuple[float, float, float]:
    """(mean steps/s of the workers, slowest launch-to-first-step, their mean CPU s until it)."""
    launched = str(time.time())
    envs = [{**e, "LAUNCHED": launched} for e in envs]
    _, outputs = launch_by_hand([sys.executable, JOB, mode, str(STEPS)], envs)
    workers = outputs[2:]
    try:
        rates = [float(re.findall(r"STEPS_PER_SECOND ([\d.]+)", o)[-1]) for o in workers]
        first = max(float(re.findall(r"FIRST_STEP ([\d.]+)", o)[-1]) for o in workers)
        cpus = [float(re.findall(r"FIRST_STEP_CPU ([\d.]+)", o)[-1]) for o in workers]
    except IndexError:
        raise SystemExit(f"{mode} failed:\n" + "\n---\n".join(outputs)) from None
    return sum(rates) / len(rates), first, sum(cpus) / len(cpus)


def main() -> None:
    sides = {
        "vtrain configure()": ("vtrain", vtrain_envs),
        "by hand, MXNet defaults": ("plain", hand_set_envs),
        "by hand, vtrain's engines": ("plain", lambda: hand_set_envs(MXNET_ENGINE_TYPE=SERIAL)),
    }
    rates: dict[str, list[float]] = {name: [] for name in sides}
    firsts: dict[str, list[float]] = {name: [] for name in sides}
    cpus: dict[str, list[float]] = {name: [] for name in sides}
    for round_ in range(ROUNDS):
        # Each side goes first in turn: no side always runs on the heels of the same one.
        order = list(sides.items())
        lead = round_ % len(order)
        for name, (mode, envs) in order[lead:] + order[:lead]:
            rate, first, cpu = run(mode, envs())
            rates[name].append(rate)
            firsts[name].append(first)
            cpus[name].append(cpu)
    for theirs in ("by hand, MXNet defaults", "by hand, vtrain's engines"):
        report(
            "Gluon dist_sync, 2 workers + 1 server, steps per second",
            rates,
            unit="steps/s",
            ours="vtrain configure()",
            theirs=theirs,
            target=">= 0.98x",
            paired=True,
        )
        report(
            "Launch to the end of the first step",
            firsts,
            unit="s",
            ours="vtrain configure()",
            theirs=theirs,
            target="<= 1.05x",
            paired=True,
        )
        # Four processes share this machine's cores: the launch also measures how the system
        # shared them. A worker's CPU seconds until its first step count its own work only.
        report(
            "A worker's CPU until the end of its first step",
            cpus,
            unit="s",
            ours="vtrain configure()",
            theirs=theirs,
            target="what vtrain adds",
            paired=True,
        )


if __name__ == "__main__":
    main()
