"""Goodput under repeated failures: vtrain against torchrun, the same DDP job, side by side.

    python bench/goodput.py [--every 30] [--for 180] [--steps 1500] [--step-delay 0.1]

The same PyTorch DDP training (a chief and a worker, gloo, the example's model and
data, a commit every --checkpoint-every steps), with its worker SIGKILLed every
--every seconds for the first --for seconds:

- vtrain: examples/pytorch/train.py under `vtrain local run --kill worker:0@T ...`
  (save_checkpoint's background commit, vtrain's restart of the job); its goodput and
  its parts from its own timeline;
- torchrun: bench/scripts/torchrun_plain.py under `torchrun --max-restarts`, rank 0's
  `torch.save` of the same state every K steps, every rank resuming from the newest
  file, as torchrun's documentation shows; the worker killed from outside.

Both are set against the physical limit: the uninterrupted job's wall-clock time.
Goodput here is the same figure for both: the steps' time (steps x the uninterrupted
median step time) over the wall-clock time to the last step.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "pytorch" / "train.py"
PLAIN = ROOT / "bench" / "scripts" / "torchrun_plain.py"
sys.path.insert(0, str(ROOT / "core"))


def _env() -> dict[str, str]:
    drop = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK", "CLUSTER_SPEC")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("AIP_")}


def vtrain(args: argparse.Namespace, work: Path, kills: list[float]) -> tuple[float, str]:
    """Run the job under `vtrain local run` with `kills`; (wall seconds, goodput line)."""
    from vtrain.timeline.reader import read_job

    out = work / "vtrain"
    options = [opt for t in kills for opt in ("--kill", f"worker:0@{t:g}")]
    command = [sys.executable, "-m", "vtrain", "local", "run", "--plain", "--workers", "1"]
    command += ["--max-restarts", "100", "--output-dir", str(out), *options, "--"]
    command += [sys.executable, str(EXAMPLE), *_job_flags(args)]
    began = time.monotonic()
    done = subprocess.run(command, env=_env(), capture_output=True, text=True, check=False)
    wall = time.monotonic() - began
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    found = read_job(str(out)).goodput
    return wall, "" if found is None else found.line()


def torchrun(args: argparse.Namespace, work: Path, kills: list[float]) -> float:
    """Run the job under torchrun, SIGKILLing rank 1's process at `kills`; its wall seconds."""
    folder = work / "torchrun"
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1"]
    with socket.socket() as s:  # torchrun hands its --master-port to the workers as it is
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command += ["--nproc-per-node", "2", "--max-restarts", "100", "--master-port", str(port)]
    command += [str(PLAIN), "--checkpoints", str(folder), *_job_flags(args)]
    began = time.monotonic()
    agent = subprocess.Popen(
        command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    killer = threading.Thread(target=_kill_rank_1, args=(agent, began, kills), daemon=True)
    killer.start()
    output = agent.communicate()[0]
    wall = time.monotonic() - began
    assert agent.returncode == 0, output[-3000:]
    return wall


def _kill_rank_1(agent: subprocess.Popen[str], began: float, kills: list[float]) -> None:
    for at in kills:
        time.sleep(max(0.0, at - (time.monotonic() - began)))
        for pid in _children(agent.pid):
            if "LOCAL_RANK=1" in _environ(pid):
                os.kill(pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _environ(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _job_flags(args: argparse.Namespace) -> list[str]:
    return [
        "--steps",
        str(args.steps),
        "--step-delay",
        str(args.step_delay),
        "--checkpoint-every",
        str(args.checkpoint_every),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=30.0)
    parser.add_argument("--for", dest="until", type=float, default=180.0)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--step-delay", type=float, default=0.1)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    args = parser.parse_args()
    kills = [args.every * k for k in range(1, int(args.until // args.every) + 1)]
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        ideal, _ = vtrain(args, work / "whole", [])
        v_wall, line = vtrain(args, work / "killed", kills)
        t_wall = torchrun(args, work / "killed", kills)
        print(f"{args.steps} steps, worker killed at {', '.join(f'{k:g}' for k in kills)} s:")
        print(f"  uninterrupted (vtrain)   {ideal:7.1f} s")
        print(f"  vtrain                   {v_wall:7.1f} s  x{v_wall / ideal:.2f}  ({line})")
        print(f"  torchrun --max-restarts  {t_wall:7.1f} s  x{t_wall / ideal:.2f}")
        print(
            f"goodput against the uninterrupted run: vtrain {ideal / v_wall:.0%}, "
            f"torchrun {ideal / t_wall:.0%}"
        )


if __name__ == "__main__":
    main()
