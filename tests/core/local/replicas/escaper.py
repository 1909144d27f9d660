"""A replica whose child escapes: it forks, the child calls setsid() and forks again, and exits.

The grandchild, in a session of its own and orphaned, sleeps; its pid is written to
OUT/escaped/<pid>. Then the replica prints --lines lines of --width characters,
sleeps --sleep seconds and exits 0.

    escaper.py OUT [--lines N] [--width W] [--sleep S]
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def escape(out: str) -> None:
    """Leave a daemon behind, as a careless data loader or server would."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(write_end, str(os.getpid()).encode())
            time.sleep(600)
        os._exit(0)
    os.close(write_end)
    os.waitpid(child, 0)
    daemon = os.read(read_end, 32).decode()
    os.makedirs(os.path.join(out, "escaped"), exist_ok=True)
    with open(os.path.join(out, "escaped", daemon), "w"):
        pass


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--lines", type=int, default=0)
    p.add_argument("--width", type=int, default=100)
    p.add_argument("--sleep", type=float, default=0.0)
    a = p.parse_args()
    escape(a.out)
    line = "x" * a.width + "\n"
    for _ in range(a.lines):
        sys.stdout.write(line)
    sys.stdout.flush()
    print("started", flush=True)
    time.sleep(a.sleep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
