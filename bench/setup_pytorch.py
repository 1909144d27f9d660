"""vtrain's PyTorch setup against what a user would otherwise run, side by side in one run.

    python bench/setup_pytorch.py  # needs torch (pip install -c tests/constraints.txt ".[pytorch]")

1. A 4-process all_reduce job: `vtrain local run --workers 3` against
   `torchrun --standalone --nproc_per_node 4` on the same work (target: <= 1.1x wall time).
2. DDP steps per second, 2 processes: vtrain's configure() against the same loop on a
   hand-set environment (MASTER_ADDR/PORT, RANK, WORLD_SIZE; target: >= 0.98x).
Runs are interleaved and repeated; medians are reported.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare import free_port, launch_by_hand, report

JOB = str(Path(__file__).resolve().parent / "scripts" / "torch_job.py")
ROUNDS = 5


def timed(command: list[str], **env: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command} failed:\n{done.stdout}\n{done.stderr}")
    return elapsed, done.stdout + done.stderr


def vtrain_job(workers: int, *args: str) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as out:
        return timed(
            [
                sys.executable,
                "-m",
                "vtrain",
                "local",
                "run",
                "--workers",
                str(workers),
                "--output-dir",
                out,
                "--",
                sys.executable,
                JOB,
                *args,
            ]
        )


def hand_set_job(nproc: int, *args: str) -> tuple[float, str]:
    """A minimal launcher: subprocess + environment, the way one writes it by hand."""
    port = str(free_port())
    envs = [
        {
            **os.environ,
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": port,
            "RANK": str(r),
            "WORLD_SIZE": str(nproc),
        }
        for r in range(nproc)
    ]
    elapsed, outputs = launch_by_hand([sys.executable, JOB, *args], envs)
    return elapsed, "".join(outputs)


def steps_per_second(output: str) -> float:
    return float(re.findall(r"STEPS_PER_SECOND ([\d.]+)", output)[-1])


def main() -> None:
    torchrun = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "4",
    ]
    walls: dict[str, list[float]] = {
        "vtrain local run --workers 3": [],
        "torchrun --standalone": [],
    }
    ddp: dict[str, list[float]] = {"vtrain configure()": [], "hand-set environment": []}
    for _ in range(ROUNDS):
        walls["vtrain local run --workers 3"].append(vtrain_job(3, "vtrain", "allreduce")[0])
        walls["torchrun --standalone"].append(timed([*torchrun, JOB, "plain", "allreduce"])[0])
        ddp["vtrain configure()"].append(steps_per_second(vtrain_job(1, "vtrain", "ddp")[1]))
        ddp["hand-set environment"].append(steps_per_second(hand_set_job(2, "plain", "ddp")[1]))
    report(
        "4-process all_reduce job, wall time",
        walls,
        unit="s",
        ours="vtrain local run --workers 3",
        theirs="torchrun --standalone",
        target="<= 1.1x",
    )
    report(
        "DDP training, 2 processes, steps per second",
        ddp,
        unit="steps/s",
        ours="vtrain configure()",
        theirs="hand-set environment",
        target=">= 0.98x",
    )


if __name__ == "__main__":
    main()
