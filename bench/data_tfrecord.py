"""TFRecord: vtrain.data's reader against `tf.data.TFRecordDataset` iterated eagerly, in one run.

    python bench/data_tfrecord.py [--records 200000] [--runs 3]

One file of random records of 100 to 1000 bytes. Each round reads it whole
with `vtrain.data.records()` (both checksums of every record checked, the
default) and with `for r in tf.data.TFRecordDataset(path): r.numpy()`, the
loop a Keras user writes to look at their data; the rounds alternate, so both
see the same machine load, and the ratio is the median of the rounds' ratios.
Target: vtrain at least 0.8x TensorFlow's records/s.
Needs TensorFlow (the tensorflow session's virtual environment).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare import report  # noqa: E402

from vtrain.data import records  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def write(path: str, count: int) -> None:
    """`count` records of 100-1000 random bytes, framed by TensorFlow's own writer."""
    import tensorflow as tf

    rng = random.Random(17)
    pool = os.urandom(1 << 20)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(count):
            start, size = rng.randrange(len(pool) - 1000), rng.randrange(100, 1001)
            writer.write(pool[start : start + size])


def per_second(work: Callable[[], int]) -> float:
    """Records per second of one pass of `work`, which returns how many it read."""
    start = time.perf_counter()
    count = work()
    return count / (time.perf_counter() - start)


def ours(path: str) -> int:
    n = 0
    for _ in records(uri=path, rank=0, world_size=1, environ={}):
        n += 1
    return n


def theirs(path: str) -> int:
    import tensorflow as tf

    n = 0
    for r in tf.data.TFRecordDataset(path):
        r.numpy()
        n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "d.tfrecord")
        write(path, args.records)
        assert ours(path) == theirs(path) == args.records  # and a warm page cache for both
        mib = os.path.getsize(path) / (1 << 20)
        results: dict[str, list[float]] = {"vtrain.data.records": [], "tf.data eager": []}
        for _ in range(args.runs):
            results["tf.data eager"].append(per_second(lambda: theirs(path)))
            # What runs right after tf.data runs 8-13% slower on 2 cores (measured): its
            # threads wind down for a while. A pause keeps that out of vtrain's time.
            time.sleep(1)
            results["vtrain.data.records"].append(per_second(lambda: ours(path)))
        report(
            f"TFRecord, {args.records} records, {mib:.0f} MiB",
            results,
            unit="records/s",
            ours="vtrain.data.records",
            theirs="tf.data eager",
            target=">= 0.8x",
            paired=True,
        )


if __name__ == "__main__":
    main()
