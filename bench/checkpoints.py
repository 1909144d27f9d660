"""Checkpoint save and restore throughput against the raw limit of the same medium, side by side.

    python bench/checkpoints.py       # 100 MiB and 1 GiB on the local disk, 100 MiB on the emulator
    python bench/checkpoints.py --gcs-sizes 100,1024 --runs 5

Local disk: "raw write" writes the bytes with os.write in 16 MiB slices and
fsyncs; "raw read" reads them back with one plain `open().read()`. Before every
read, raw or restore, the file's pages are dropped from the page cache
(posix_fadvise DONTNEED after fsync), so both read the disk. Save includes the
CRC, fsyncs, the rename and the listing (no retention: the raw side deletes
nothing either); restore reads into memory and checks
every byte against the manifest. Emulator: a plain `upload_from_string` and
`download_as_bytes` of the same bytes with the storage client, against save and
restore to gs:// on a `gcp-storage-emulator` started here on a free loopback port.

Targets (issue 4): save >= 0.8x raw write and restore >= 0.8x raw read on the
local disk; >= 0.9x the plain client upload on the emulator.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

from vtrain.checkpoints import CheckpointManager
from vtrain.checkpoints.layout import step_folder

MIB = 1 << 20
CHUNK = 16 * MIB


def drop_cache(root: str) -> None:
    """Drop the page cache of every file under `root` (or of one file)."""
    paths = (
        [root]
        if os.path.isfile(root)
        else [os.path.join(d, f) for d, _, files in os.walk(root) for f in files]
    )
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def raw_write(path: str, data: bytes) -> None:
    view = memoryview(data)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for i in range(0, len(view), CHUNK):
            os.write(fd, view[i : i + CHUNK])
        os.fsync(fd)
    finally:
        os.close(fd)


def raw_read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def rate(size: int, seconds: float) -> str:
    return f"{size / MIB / seconds:8.0f} MiB/s"


def report(label: str, size: int, base: list[float], ours: list[float], target: float) -> None:
    b, o = statistics.median(base), statistics.median(ours)
    ratio = b / o
    verdict = "ok" if ratio >= target else "BELOW TARGET"
    print(
        f"  {label:<24} raw {rate(size, b)}   vtrain {rate(size, o)}   "
        f"ratio {ratio:4.2f} (best-of {min(base) / min(ours):4.2f}; target {target}) {verdict}"
    )


def bench_local(size_mib: int, runs: int, root: str) -> None:
    size = size_mib * MIB
    data = os.urandom(size)  # random.randbytes overflows at 1 GiB
    raw_path = os.path.join(root, "raw.bin")
    m = CheckpointManager(os.path.join(root, "ckpt"), is_leader=True, environ={})
    writes, reads, saves, restores = [], [], [], []
    for run in range(runs):  # interleaved, so a noisy neighbour hurts both columns alike
        start = time.perf_counter()
        raw_write(raw_path, data)
        writes.append(time.perf_counter() - start)
        drop_cache(raw_path)
        start = time.perf_counter()
        copy = raw_read(raw_path)
        reads.append(time.perf_counter() - start)
        del copy
        os.remove(raw_path)

        start = time.perf_counter()
        m.save(run, data)
        saves.append(time.perf_counter() - start)
        drop_cache(m.directory)
        start = time.perf_counter()
        ckpt = m.restore(run)
        restores.append(time.perf_counter() - start)
        assert ckpt is not None and ckpt.data == data
        del ckpt
        m.location.remove(step_folder(run))  # outside the timing, as the raw file's removal is
    print(f"local disk, {size_mib} MiB, median of {runs}:")
    report("save vs write+fsync", size, writes, saves, 0.8)
    report("restore vs read", size, reads, restores, 0.8)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def emulator() -> Iterator[str]:
    """A `gcp-storage-emulator` on a free loopback port, stopped afterwards; yields its URL."""
    port = free_port()
    host = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gcp_storage_emulator",
            "start",
            "--host=127.0.0.1",
            f"--port={port}",
            "--in-memory",
            "-q",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{host}/storage/v1/b?project=x", timeout=2).close()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the GCS emulator did not start") from None
                time.sleep(0.1)
        yield host
    finally:
        process.terminate()
        process.wait(timeout=10)


def bench_gcs_size(client: Any, env: dict[str, str], size_mib: int, runs: int) -> None:
    size = size_mib * MIB
    data = os.urandom(size)  # random.randbytes overflows at 1 GiB
    blob = client.bucket("vtrain-bench").blob(f"plain-{size_mib}")
    m = CheckpointManager(
        f"gs://vtrain-bench/ckpt-{size_mib}",
        is_leader=True,
        environ=env,
        gcs_mount="/nonexistent",
        client=client,
    )
    uploads, downloads, saves, restores = [], [], [], []
    for run in range(runs):  # interleaved, so a noisy neighbour hurts both columns alike
        uploads.append(timed(lambda: blob.upload_from_string(data)))
        downloads.append(timed(lambda: blob.download_as_bytes()))
        blob.delete()
        saves.append(timed(lambda r=run: m.save(r, data)))
        restores.append(timed(lambda r=run: m.restore(r)))
        m.location.remove(step_folder(run))
    print(f"gs:// on the emulator, {size_mib} MiB, median of {runs}:")
    report("save vs plain upload", size, uploads, saves, 0.9)
    report("restore vs plain download", size, downloads, restores, 0.9)


def bench_gcs(sizes_mib: list[int], runs: int) -> None:
    from vtrain.storage import storage_client

    with emulator() as host:
        env = {"STORAGE_EMULATOR_HOST": host}
        client = storage_client(env)
        client.create_bucket("vtrain-bench")
        for size_mib in sizes_mib:
            bench_gcs_size(client, env, size_mib, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--local-sizes", default="100,1024", help="MiB, comma-separated")
    parser.add_argument("--gcs-sizes", default="100", help="MiB, comma-separated; '' skips")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", default=None, help="a folder on the disk to measure")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="vtrain-bench-", dir=args.dir)
    try:
        for size in (int(s) for s in args.local_sizes.split(",") if s):
            bench_local(size, args.runs, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    sizes = [int(s) for s in args.gcs_sizes.split(",") if s]
    if sizes:
        bench_gcs(sizes, args.runs)


if __name__ == "__main__":
    main()
