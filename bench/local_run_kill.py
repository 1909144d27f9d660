"""The SIGKILL campaign of `vtrain local run`: kill vtrain at a random moment, count survivors.

    python bench/local_run_kill.py                    # 30 kills, 2 workers + 1 ps, up to 3 s in
    python bench/local_run_kill.py --kills 200 --workers 3 --within 5 --seed 7

Each run starts a job whose replicas each leave a daemon (double fork, setsid:
tests/core/local/replicas/escaper.py) and then sleep; vtrain is SIGKILLed at a
random moment -- before, while and after the replicas start -- and every
process that carries the run's marker variable must be gone within --settle
seconds. A survivor is reported by pid and command line, then killed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

_ESCAPER = Path(__file__).parents[1] / "tests" / "core" / "local" / "replicas" / "escaper.py"
# The marker and its /proc scan are the local-cluster tests' own.
sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "core" / "local"))
from local_procs import MARK, marked  # noqa: E402


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def one_kill(args: argparse.Namespace, after: float, work: Path) -> tuple[list[str], float, int]:
    """Run one job, SIGKILL vtrain `after` seconds in; (survivors, seconds to clean, started)."""
    mark = uuid.uuid4().hex
    records = work / mark
    command = [sys.executable, "-m", "vtrain", "local", "run", "--workers", str(args.workers)]
    command += ["--ps", str(args.ps), "--output-dir", str(work / "out" / mark), "--"]
    command += [sys.executable, str(_ESCAPER), str(records), "--sleep", "600"]
    env = {**os.environ, MARK: mark, "NO_COLOR": "1"}
    vtrain = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(after)
    vtrain.send_signal(signal.SIGKILL)
    vtrain.wait()
    killed_at = time.monotonic()
    escaped = records / "escaped"
    started = len(list(escaped.iterdir())) if escaped.exists() else 0
    while (left := marked(mark)) and time.monotonic() - killed_at < args.settle:
        time.sleep(0.02)
    cleaned = time.monotonic() - killed_at
    survivors = [f"{pid} {_command_line(pid)}" for pid in left]
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return survivors, cleaned, started


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ps", type=int, default=1)
    parser.add_argument("--within", type=float, default=3.0, help="kill up to this many s in")
    parser.add_argument("--settle", type=float, default=5.0, help="s for the keeper to clean up")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    replicas = 1 + args.workers + args.ps
    failed, times, daemons = 0, [], 0
    with tempfile.TemporaryDirectory(prefix="vtrain-kill-") as tmp:
        for i in range(args.kills):
            after = rng.uniform(0.0, args.within)
            survivors, cleaned, started = one_kill(args, after, Path(tmp))
            times.append(cleaned)
            daemons += started
            if survivors:
                failed += 1
                print(f"kill {i + 1} at {after:.2f} s: {len(survivors)} survived:", flush=True)
                for line in survivors:
                    print(f"  {line}", flush=True)
    times.sort()
    print(
        f"{args.kills} SIGKILLs of `vtrain local run` ({replicas} replicas, each leaving a "
        f"daemon; {daemons} daemons had started): {failed} left a process behind; "
        f"clean after median {times[len(times) // 2]:.2f} s, max {times[-1]:.2f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
