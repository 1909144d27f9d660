"""What the rehearsal's watcher (fanotify, the process connector) costs a write-heavy loop.

    python bench/watch_overhead.py [--steps 20] [--files 200] [--mib 64] [--runs 7]

One loop, as a checkpointing script writes: each step writes --files small files
(4 KiB each, Python `open`) and one large file of --mib MiB by native code
(`torch.save` where torch is installed, else `np.save`), then renames it into
place. The loop runs as a child process, timed by itself (its loop only, not its
start), alternately with and without a `vtrain.local.watch.Watcher` watching it
as `vtrain local run` does; and once more as raw `dd`-like writes of the same
bytes, the disk's own limit. Figures are medians over --runs rounds.

With --import MODULE it also measures vtrain's side: the CPU time the watcher's
thread takes while a replica imports MODULE (thousands of files: TensorFlow's).

Target (issue 41): the watched loop at most 3% slower than the unwatched one.
Needs root (fanotify); prints why not elsewhere.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "core"))

from vtrain.local.watch import Watcher  # noqa: E402 (after the path)

LOOP = textwrap.dedent(
    """
    import os, sys, time
    folder, steps, files, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    try:
        import torch
        big = torch.zeros(mib * 262144)  # float32: mib MiB
        save = lambda path: torch.save(big, path)
    except ImportError:
        import numpy as np
        big = np.zeros(mib * 262144, dtype=np.float32)
        save = lambda path: np.save(path, big)
    small = os.urandom(4096)
    start = time.perf_counter()
    for step in range(steps):
        for n in range(files):
            with open(os.path.join(folder, f"s{n}.bin"), "wb") as f:
                f.write(small)
        tmp = os.path.join(folder, "model.tmp")
        with open(tmp, "wb") as f:
            save(f)
        os.replace(tmp, os.path.join(folder, "model.pt"))
    print(time.perf_counter() - start)
    """
)


def timed(folder: str, args: argparse.Namespace, watch: bool) -> float:
    watcher = Watcher.start([folder], os.getpid()) if watch else None
    if isinstance(watcher, str):
        sys.exit(f"the watcher cannot run here: {watcher}")
    proc = subprocess.Popen(
        [sys.executable, "-c", LOOP, folder, str(args.steps), str(args.files), str(args.mib)],
        stdout=subprocess.PIPE,
        text=True,
    )
    if watcher is not None:
        from vtrain.local.evidence import Run

        watcher.started(proc.pid, Run("chief-0", 0, None, os.devnull, None))
    out, _ = proc.communicate()
    if watcher is not None:
        watcher.stop()
    return float(out.strip())


def raw(folder: str, args: argparse.Namespace) -> float:
    """The same bytes written by os.write alone: what the disk itself allows."""
    import time

    data, small = bytes(args.mib << 20), os.urandom(4096)
    start = time.perf_counter()
    for _ in range(args.steps):
        for n in range(args.files):
            fd = os.open(os.path.join(folder, f"r{n}.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.write(fd, small)
            os.close(fd)
        fd = os.open(os.path.join(folder, "raw.tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.write(fd, data)
        os.close(fd)
        os.replace(os.path.join(folder, "raw.tmp"), os.path.join(folder, "raw.bin"))
    return time.perf_counter() - start


def import_cost(module: str) -> tuple[float, int]:
    """vtrain's CPU seconds, and the events seen, while a watched child imports `module`."""
    import time

    from vtrain.local.evidence import Run

    watcher = Watcher.start(
        [tempfile.gettempdir(), os.getcwd(), os.path.expanduser("~")], os.getpid()
    )
    if isinstance(watcher, str):
        sys.exit(f"the watcher cannot run here: {watcher}")
    run = Run("chief-0", 0, None, os.devnull, None)
    cpu = time.process_time()
    proc = subprocess.Popen([sys.executable, "-c", f"import {module}"], stderr=subprocess.DEVNULL)
    watcher.started(proc.pid, run)
    proc.wait()
    watcher.stop()
    return time.process_time() - cpu, len(run.seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--import", dest="module", help="also: vtrain's CPU while MODULE imports")
    args = parser.parse_args()
    plain, watched, disk = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.runs):
            plain.append(timed(folder, args, watch=False))
            watched.append(timed(folder, args, watch=True))
            disk.append(raw(folder, args))
    p, w, d = (statistics.median(x) for x in (plain, watched, disk))
    ratios = statistics.median(b / a for a, b in zip(plain, watched, strict=True))
    print(f"loop of {args.steps} steps, {args.files} small files + {args.mib} MiB each")
    print(f"  unwatched  {p:7.3f} s")
    print(f"  watched    {w:7.3f} s   {w / p:.3f}x (median of rounds' ratios {ratios:.3f}x)")
    print(f"  raw disk   {d:7.3f} s   unwatched loop is {p / d:.2f}x the disk's own time")
    print("target: watched at most 1.03x unwatched")
    if args.module:
        costs = [import_cost(args.module)[0] for _ in range(args.runs)]
        print(
            f"vtrain's CPU while a replica imports {args.module}: "
            f"{statistics.median(costs) * 1000:.0f} ms (median of {args.runs})"
        )


if __name__ == "__main__":
    main()
