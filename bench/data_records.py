"""Streaming records with vtrain.data, side by side with the plain loops they replace.

    python bench/data_records.py [--mib 200] [--runs 5] [--only jsonl|tfrecord]
                                 [--without-google-crc32c]

JSON Lines: `records()` against `for line in open(path): json.loads(line)`
(target: at least 0.9x its rate). TFRecord: `records()` reading and checking
every record, its rate in MB/s, against `records(check_crc=False)` (target: at
least 0.9x) and `tf.data.TFRecordDataset` iterated eagerly when TensorFlow
imports (target: at least 0.8x). The rounds interleave
the contenders and each ratio is the median of the rounds' own ratios, so a
machine whose load drifts moves it less. --without-google-crc32c hides the C CRC32C, as in an
installation without it: the checksums are then computed in Python.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
import tempfile
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import report, report_ratio  # noqa: E402

from vtrain.data import records  # noqa: E402
from vtrain.data.tfrecord import masked_crc32c  # noqa: E402


def rate(mib: float, work: Callable[[], int]) -> float:
    """MB/s of one pass of `work` over `mib` MiB."""
    start = time.perf_counter()
    work()
    return mib * 1.048576 / (time.perf_counter() - start)


def write_jsonl(path: str, mib: int) -> None:
    rows = [
        json.dumps({"id": i, "text": "word " * 20, "label": i % 7, "v": [0.5, 1.5]})
        for i in range(10_000)
    ]
    block = ("\n".join(rows) + "\n").encode()
    with open(path, "wb") as f:
        for _ in range(mib * (1 << 20) // len(block) + 1):
            f.write(block)


def write_tfrecord(path: str, mib: int) -> None:
    out = bytearray()
    for i in range(1000):
        data = os.urandom(200 + i % 800)
        length = struct.pack("<Q", len(data))
        out += length + struct.pack("<I", masked_crc32c(length))
        out += data + struct.pack("<I", masked_crc32c(data))
    with open(path, "wb") as f:
        for _ in range(mib * (1 << 20) // len(out) + 1):
            f.write(out)


def plain_jsonl(path: str) -> int:
    n = 0
    with open(path) as f:  # the loop the issue names: `for line in open(path)`
        for line in f:
            json.loads(line)
            n += 1
    return n


def ours(path: str, **kw: bool) -> int:
    return sum(1 for _ in records(uri=path, rank=0, world_size=1, environ={}, **kw))


def tf_dataset(path: str) -> Callable[[], int] | None:
    try:
        import tensorflow as tf

        tf.data.TFRecordDataset  # noqa: B018 - a namespace package without TensorFlow has none
    except (ImportError, AttributeError):
        return None
    return lambda: sum(1 for _ in tf.data.TFRecordDataset(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=200, help="size of each test file")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=("jsonl", "tfrecord"), help="run one format's rounds")
    parser.add_argument("--without-google-crc32c", action="store_true")
    args = parser.parse_args()
    if args.without_google_crc32c:
        sys.modules["google_crc32c"] = None  # type: ignore[assignment]  # import fails
    from vtrain.storage.crc32c import implementation

    print(f"CRC32C: {implementation()} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as folder:
        jsonl, tfrecord = os.path.join(folder, "d.jsonl"), os.path.join(folder, "d.tfrecord")
        if args.only != "tfrecord":
            write_jsonl(jsonl, args.mib)
            bench_jsonl(jsonl, args.runs)
        if args.only != "jsonl":
            write_tfrecord(tfrecord, args.mib)
            bench_tfrecord(tfrecord, args.runs)


def bench_jsonl(jsonl: str, runs: int) -> None:
    """`records()` against the plain `json.loads` loop, in interleaved rounds."""
    mib = os.path.getsize(jsonl) / (1 << 20)
    results: dict[str, list[float]] = {"vtrain.data.records": [], "open + json.loads": []}
    for _ in range(runs):  # interleaved, so both see the same machine load
        results["open + json.loads"].append(rate(mib, lambda: plain_jsonl(jsonl)))
        results["vtrain.data.records"].append(rate(mib, lambda: ours(jsonl)))
    report(
        f"JSON Lines, {mib:.0f} MiB",
        results,
        unit="MB/s",
        ours="vtrain.data.records",
        theirs="open + json.loads",
        target=">= 0.9x",
        paired=True,
    )


def bench_tfrecord(tfrecord: str, runs: int) -> None:
    """`records()` against `check_crc=False` and tf.data, in interleaved rounds."""
    mib = os.path.getsize(tfrecord) / (1 << 20)
    contenders: dict[str, Callable[[], int]] = {
        "vtrain.data.records": lambda: ours(tfrecord),
        "records(check_crc=False)": lambda: ours(tfrecord, check_crc=False),
    }
    theirs = tf_dataset(tfrecord)
    if theirs is not None:
        contenders["tf.data.TFRecordDataset"] = theirs
    results: dict[str, list[float]] = {name: [] for name in contenders}
    for i in range(runs):  # interleaved, each round in another order: no one always goes first
        names = list(contenders)
        for name in names[i % len(names) :] + names[: i % len(names)]:
            results[name].append(rate(mib, contenders[name]))
            if name == "tf.data.TFRecordDataset":
                # What runs right after tf.data runs 8-13% slower on 2 cores (measured): its
                # threads wind down for a while. A pause keeps that out of the next one's time.
                time.sleep(1)
    title = f"TFRecord, {mib:.0f} MiB"
    if theirs is None:
        title += " (TensorFlow not installed: no tf.data column)"
    report(
        title,
        results,
        unit="MB/s",
        ours="vtrain.data.records",
        theirs="records(check_crc=False)",
        target=">= 0.9x",
        paired=True,
    )
    if theirs is not None:
        report_ratio(
            results,
            ours="vtrain.data.records",
            theirs="tf.data.TFRecordDataset",
            target=">= 0.8x",
            paired=True,
        )


if __name__ == "__main__":
    main()
