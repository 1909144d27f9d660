"""A 2 GiB JSON Lines file streams through `records()` with a small, flat peak memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

LIMIT_MIB = 100
SIZE = 2 << 30
CHILD = """
import sys, vtrain.data
n = sum(1 for _ in vtrain.data.records(uri=sys.argv[1], rank=0, world_size=1, environ={}))
peak = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(n, peak[0])
"""


def test_a_2_gib_file_streams_under_100_mib(tmp_path: Path) -> None:
    # Long records keep the JSON decoding short; the file is what is large.
    line = (json.dumps({"text": "x" * (64 << 10)}) + "\n").encode()
    block = line * 16  # about 1 MiB
    count = SIZE // len(block) + 1
    path = tmp_path / "big.jsonl"
    try:
        with open(path, "wb") as f:
            for _ in range(count):
                f.write(block)
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=True
        )
    finally:
        path.unlink(missing_ok=True)
    # The child's own peak, VmHWM: getrusage's ru_maxrss would not do, in the child or here.
    # Linux keeps ru_maxrss across exec, so a child forked from this ~100 MiB pytest starts
    # at pytest's size; VmHWM belongs to the address space, which exec replaces.
    records, peak_kib = map(int, done.stdout.split())
    peak_mib = peak_kib / 1024
    assert records == count * 16
    assert peak_mib < LIMIT_MIB, f"peak {peak_mib:.0f} MiB"
