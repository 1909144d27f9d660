"""`python -m vtrain_pytorch.launch --nproc-per-node N SCRIPT [ARGS…]`: N processes per machine.

The platform starts one process per machine. On a machine with several GPUs
this starts one per GPU and, as torchrun does, gives each its global RANK,
WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and the chief's address: machine m,
process p has rank m * N + p. It forwards SIGTERM/SIGINT to the processes, and
fails as soon as one of them fails, so that the platform restarts the replica.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType

from vtrain import ClusterInfo, UsageError
from vtrain.variables import LOCAL_LAUNCH
from vtrain_pytorch.world import World


def _count(text: str) -> int:
    if text == "gpu":
        import torch

        return max(1, int(torch.cuda.device_count()))
    if not text.isdigit() or int(text) < 1:
        raise UsageError(
            "not a count", source="--nproc-per-node", value=text, expected="N >= 1 or 'gpu'"
        )
    return int(text)


def _environments(count: int) -> list[dict[str, str]]:
    info = ClusterInfo.from_env()
    if not info.is_trainer:
        return [dict(os.environ)]  # a ps or evaluator replica runs once, as it is
    return [
        {
            **os.environ,
            **World.from_cluster(
                info, nproc_per_node=count, local_rank=i, environ=os.environ
            ).env(),
            LOCAL_LAUNCH: "1",
        }
        for i in range(count)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Start the processes, wait for them, return the first failure's status (or 0)."""
    parser = argparse.ArgumentParser(prog="python -m vtrain_pytorch.launch", description=__doc__)
    parser.add_argument("--nproc-per-node", default="gpu", help="a count, or 'gpu' (default)")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    try:
        count = _count(args.nproc_per_node)
    except UsageError as e:
        parser.error(str(e))
    processes = [
        subprocess.Popen([sys.executable, args.script, *args.args], env=env)
        for env in _environments(count)
    ]

    def forward(signum: int, frame: FrameType | None) -> None:
        for p in processes:
            if p.poll() is None:
                p.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while True:
        codes = [p.poll() for p in processes]
        failed = [c for c in codes if c not in (None, 0)]
        if failed:
            # One rank down means the rest will hang in their next collective: stop them.
            forward(signal.SIGTERM, None)
            for p in processes:
                p.wait()
            return failed[0] if failed[0] > 0 else 128 - failed[0]
        if all(c == 0 for c in codes):
            return 0
        time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())
