"""What an exact data position costs: per step, and when a job resumes.

    python bench/data_resume.py [--sizes 10,1024] [--runs 3] [--batch 32] [--replicas 8]

Per step: `Stream.state()` on one replica and `merge_states` of every replica's
state, against a training step's worth (`--batch` records) of reading the data
records bench's JSON Lines (target: each < 1% of the step). Resume start-up:
time to the first record of a stream resumed at 10%, 50% and 90% of a share of
each size, against reading the same share from its start to the same record
(`islice(records(), k, None)`, what a restart without a position does); target:
the seek cost is the same at every position. Files live in /tmp and are removed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from itertools import islice
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import report  # noqa: E402
from data_records import write_jsonl  # noqa: E402

from vtrain.data import merge_states, records, stream  # noqa: E402


def seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def per_call(work: Callable[[], object], calls: int) -> float:
    """Microseconds per call of `work`, over `calls` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        work()
    return (time.perf_counter() - start) / calls * 1e6


def one_round(opts: dict[str, Any], batch: int, replicas: int) -> dict[str, float]:
    """Microseconds: a step of each reader, state(), merge_states, both when shuffling."""
    steps = 2000
    plain = records(rank=0, world_size=replicas, **opts)
    ours = stream(rank=0, world_size=replicas, **opts)
    found = {
        "records()": seconds(lambda: sum(1 for _ in islice(plain, steps * batch))) / steps * 1e6,
        "stream": seconds(lambda: sum(1 for _ in islice(ours, steps * batch))) / steps * 1e6,
        "state": per_call(ours.state, 20_000),
    }
    every = [stream(rank=r, world_size=replicas, **opts) for r in range(replicas)]
    mixed = [stream(rank=r, world_size=replicas, shuffle_seed=1, **opts) for r in range(replicas)]
    for one in every + mixed:
        list(islice(one, 3 * batch))
    states = [one.state() for one in every]
    found["merge"] = per_call(lambda: merge_states(states), 2_000)
    both = per_call(lambda: merge_states([one.state() for one in mixed]), 2_000)
    found["shuffled"] = both / replicas
    return found


def per_step(folder: str, runs: int, batch: int, replicas: int) -> None:
    """state() and merge_states against a step of `batch` records."""
    split = os.path.join(folder, "split")
    os.makedirs(split)
    for f in range(2 * replicas):  # two 4 MiB files a replica: a listing of some length
        write_jsonl(os.path.join(split, f"training-{f:05d}.jsonl"), 4)
    opts: dict[str, Any] = {"uri": os.path.join(split, "*"), "environ": {}}
    step = f"a step ({batch} records, stream)"
    names = {
        "stream": step,
        "records()": f"a step ({batch} records, records())",
        "state": "Stream.state()",
        "merge": f"merge_states ({replicas} states)",
        "shuffled": "(state() + merge) / replica, shuffled",
    }
    results: dict[str, list[float]] = {name: [] for name in names.values()}
    for _ in range(runs):
        for key, value in one_round(opts, batch, replicas).items():
            results[names[key]].append(value)
    title = f"Per step, {replicas} replicas, {2 * replicas} files of 4 MiB (microseconds)"
    report(title, results, unit="us", ours="Stream.state()", theirs=step, target="< 0.01x")
    median = {name: statistics.median(values) for name, values in results.items()}
    for name in (names["merge"], names["shuffled"], names["records()"]):
        print(f"  {name} / {step}: {median[name] / median[step]:.4f}x")


def resume_startup(folder: str, mib: int, runs: int) -> None:
    """Time to the first record: resumed at a position, against reading up to it."""
    path = os.path.join(folder, f"share-{mib}.jsonl")
    write_jsonl(path, mib)
    opts: dict[str, Any] = {"uri": path, "rank": 0, "world_size": 1, "environ": {}}
    with open(path, "rb") as f:
        total = sum(1 for _ in f)
    marks = {p: int(total * p / 100) for p in (10, 50, 90)}
    positions: dict[int, dict[str, Any]] = {}
    shuffled: dict[int, dict[str, Any]] = {}
    for into, kept in ((positions, {}), (shuffled, {"shuffle_seed": 1})):
        one = stream(**opts, **kept)
        at = 0
        for p, k in marks.items():
            list(islice(one, k - at))
            at = k
            into[p] = json.loads(json.dumps(merge_states([one.state()])))
    results: dict[str, list[float]] = {}
    for p, k in marks.items():
        for name in (f"seek to {p}%", f"seek to {p}%, shuffled", f"read to {p}%"):
            results.setdefault(name, [])
        for _ in range(runs):
            results[f"seek to {p}%"].append(
                seconds(lambda p=p: next(iter(stream(**opts, resume=positions[p])))) * 1e3
            )
            results[f"seek to {p}%, shuffled"].append(
                seconds(lambda p=p: next(iter(stream(**opts, shuffle_seed=1, resume=shuffled[p]))))
                * 1e3
            )
            results[f"read to {p}%"].append(
                seconds(lambda k=k: next(islice(records(**opts), k, None))) * 1e3
            )
    print(f"Resume start-up, a {mib} MiB share of {total} records (ms to the first record):")
    for name, values in results.items():
        print(f"  {name:<34}{statistics.median(values):9.2f} ms")
    for p in marks:
        seek = statistics.median(results[f"seek to {p}%"])
        read = statistics.median(results[f"read to {p}%"])
        print(f"  at {p}%: seek / read from the start: {seek / read:.2e}x")
    seeks = [statistics.median(results[f"seek to {p}%"]) for p in marks]
    print(f"  seek at 90% / seek at 10%: {seeks[-1] / seeks[0]:.2f}x (target: about 1x)")
    os.remove(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,1024", help="share sizes in MiB, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32, help="records per training step")
    parser.add_argument("--replicas", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        per_step(folder, args.runs, args.batch, args.replicas)
        for mib in (int(s) for s in args.sizes.split(",")):
            resume_startup(folder, mib, args.runs)


if __name__ == "__main__":
    main()
