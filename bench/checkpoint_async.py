"""Background saves and parallel gs:// transfers, side by side with what they replace.

    python bench/checkpoint_async.py                 # all three parts
    python bench/checkpoint_async.py --parts loop,held --runs 3

loop   A training loop (a step hashes 32 MiB, ~20 ms of GIL-free work, and
       changes the state in place) that checkpoints 256 MiB every N steps, N set
       so the interval is --interval seconds (3 by default; the output shows what
       one blocking save costs in the loop, which must be less). Steps per second
       with no checkpoints, with blocking saves, and with `blocking=False`.
       Target: background >= 0.95x the loop without checkpoints.
held   How long `save(blocking=False)` of 1 GiB (a bytearray the loop owns, so
       it must be copied) holds the caller, against a blocking save of the same
       bytes on the same disk. Target: <= 15%. The manager's first background
       save allocates its staging buffer (page faults: about 1 s per GiB on
       these VMs); later ones copy into it. Both are shown.
gcs    On the emulator, a 16-file checkpoint of 400 MiB: save and restore with
       8 transfers at a time (the default on gs://) against the same code with
       one at a time, and against a plain loop of `upload_from_string` /
       `download_as_bytes` that a user would write. Target: >= 1.5x sequential.
       Twice: straight to the emulator, and through a loopback proxy that adds
       a round trip to every request (--rtt-ms, 20 by default), as a real object
       store has and the emulator next door does not. The emulator
       (gcp-storage-emulator) serves one request at a time, on a 2-core machine:
       straight to it, parallel requests can only queue; Cloud Storage serves
       them concurrently, so the round-trip figure is the one that says what
       parallel transfers buy there.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from checkpoints import drop_cache, emulator  # noqa: E402

from vtrain.checkpoints import CheckpointManager  # noqa: E402
from vtrain.storage.gcs import GcsLocation, storage_client  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "core" / "checkpoints"))
from faulty_proxy import FaultyProxy  # noqa: E402

MIB = 1 << 20


def loop(steps: int, every: int | None, manager: CheckpointManager | None, blocking: bool) -> float:
    """Steps per second of the toy training loop; checkpoints every `every` steps."""
    state = bytearray(os.urandom(256 * MIB))
    work = memoryview(state)[: 32 * MIB]
    start = time.perf_counter()
    for step in range(1, steps + 1):
        digest = hashlib.sha256(work).digest()  # the step: GIL-free, like a framework's kernels
        state[step % len(state)] = digest[0]  # ...and it changes the state in place
        if manager is not None and every and step % every == 0:
            manager.save(step, {"model.bin": state}, blocking=blocking)
    if manager is not None:
        manager.wait()  # the last save counts too
    return steps / (time.perf_counter() - start)


def bench_loop(root: str, runs: int, interval: float) -> None:
    step_time = 1 / loop(20, None, None, True)
    every = max(2, round(interval / step_time))
    steps = every * 6
    results: dict[str, list[float]] = {"none": [], "blocking": [], "background": []}
    for run in range(runs):  # interleaved: a noisy neighbour hurts every column alike
        results["none"].append(loop(steps, None, None, True))
        for label, blocking in (("blocking", True), ("background", False)):
            folder = os.path.join(root, f"{label}-{run}")
            m = CheckpointManager(folder, is_leader=True, environ={}, keep=2)
            results[label].append(loop(steps, every, m, blocking))
            shutil.rmtree(folder)
    base = statistics.median(results["none"])
    # What one blocking save of 256 MiB costs inside the loop: the interval must be longer.
    one_save = (steps / statistics.median(results["blocking"]) - steps / base) / 6
    print(
        f"loop: a step {step_time * 1e3:.0f} ms, a save of 256 MiB every {every} steps "
        f"({every * step_time:.1f} s; one blocking save costs {one_save:.2f} s in the loop), "
        f"{steps} steps, median of {runs}:"
    )
    for label, values in results.items():
        rate = statistics.median(values)
        target = "  (target >= 0.95)" if label == "background" else ""
        print(f"  {label:<11} {rate:6.2f} steps/s   {rate / base:4.2f}x the loop without{target}")


def bench_held(root: str, runs: int) -> None:
    data = bytearray(os.urandom(1024 * MIB))
    first, held, blocking = [], [], []
    for run in range(runs):
        m = CheckpointManager(os.path.join(root, f"held-{run}"), is_leader=True, environ={}, keep=1)
        start = time.perf_counter()
        m.save(1, data)
        blocking.append(time.perf_counter() - start)
        for step, times in ((2, first), (3, held)):
            drop_cache(m.directory)
            start = time.perf_counter()
            m.save(step, data, blocking=False)
            times.append(time.perf_counter() - start)
            m.wait()
        m.close()
        shutil.rmtree(m.directory)
    f, h, b = (statistics.median(x) for x in (first, held, blocking))
    print(f"held: 1 GiB bytearray, median of {runs}:")
    print(
        f"  blocking save {b:.2f} s; save(blocking=False) returns after {h:.3f} s "
        f"= {h / b:.1%} of it (target <= 15%); the manager's first one, which allocates "
        f"its staging buffer, {f:.3f} s = {f / b:.0%}"
    )


def bench_gcs(runs: int, rtt: float) -> None:
    with emulator() as host:
        storage_client({"STORAGE_EMULATOR_HOST": host}).create_bucket("vtrain-bench")
        bench_gcs_through(host, runs, "straight to the emulator")
        with FaultyProxy(host, delay=rtt) as proxy:
            bench_gcs_through(proxy.url, runs, f"with a {rtt * 1e3:.0f} ms round trip per request")


def bench_gcs_through(host: str, runs: int, how: str) -> None:
    files = {f"shard-{i:02d}.bin": os.urandom(25 * MIB) for i in range(16)}
    size = sum(len(v) for v in files.values())
    env = {"STORAGE_EMULATOR_HOST": host}
    client = storage_client(env)
    bucket = client.bucket("vtrain-bench")
    tag = os.urandom(3).hex()
    parallel = GcsLocation.transfers
    times: dict[str, list[float]] = {}

    def timed(label: str, fn: Any) -> Any:
        start = time.perf_counter()
        out = fn()
        times.setdefault(label, []).append(time.perf_counter() - start)
        return out

    for run in range(runs):
        # What a user writes by hand: one object after the other.
        blobs = {name: bucket.blob(f"plain-{tag}-{run}/{name}") for name in files}
        timed("plain upload", lambda b=blobs: [b[n].upload_from_string(files[n]) for n in b])
        timed("plain download", lambda b=blobs: [b[n].download_as_bytes() for n in b])
        for label, transfers in (("sequential", 1), ("parallel", parallel)):
            GcsLocation.transfers = transfers  # the same code, one request at a time or 8
            uri = f"gs://vtrain-bench/{label}-{tag}-{run}"
            m = CheckpointManager(uri, is_leader=True, environ=env, gcs_mount="/none")
            timed(f"{label} save", lambda m=m: m.save(1, files))
            ckpt = timed(f"{label} restore", lambda m=m: m.restore(1))
            assert ckpt is not None and {k: bytes(v) for k, v in ckpt.files.items()} == files
            m.location.remove()  # the emulator keeps everything in memory
        for blob in blobs.values():
            blob.delete()
        GcsLocation.transfers = parallel
    print(f"gcs: {len(files)} files, {size // MIB} MiB, {how}, median of {runs}:")
    med = {k: statistics.median(v) for k, v in times.items()}
    for what, plain in (("save", "plain upload"), ("restore", "plain download")):
        seq, par = med[f"sequential {what}"], med[f"parallel {what}"]
        print(
            f"  {what:<8} parallel {size / MIB / par:5.0f} MiB/s   sequential "
            f"{size / MIB / seq:5.0f} MiB/s   {plain} {size / MIB / med[plain]:5.0f} MiB/s   "
            f"parallel/sequential {seq / par:4.2f}x (target >= 1.5)   "
            f"vs {plain} {med[plain] / par:4.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default="loop,held,gcs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=None, help="a folder on the disk to measure")
    parser.add_argument("--interval", type=float, default=3.0, help="seconds between saves")
    parser.add_argument("--rtt-ms", type=float, default=20.0, help="round trip added by the proxy")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    root = tempfile.mkdtemp(prefix="vtrain-bench-async-", dir=args.dir)
    try:
        if "loop" in parts:
            bench_loop(root, args.runs, args.interval)
        if "held" in parts:
            bench_held(root, args.runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if "gcs" in parts:
        bench_gcs(args.runs, args.rtt_ms / 1e3)


if __name__ == "__main__":
    main()
