"""Helpers for the data tests: write JSON Lines, CSV and TFRecord files, and an environment."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

from platform_examples import tf_config

from vtrain.data.tfrecord import masked_crc32c

CLUSTER = {"chief": ["c:1"], "worker": ["w0:1", "w1:1"], "ps": ["p:1"]}


def replica_env(role: str, index: int = 0, **extra: str) -> dict[str, str]:
    """The environment of one replica of CLUSTER (chief, 2 workers, 1 ps)."""
    return {"TF_CONFIG": tf_config(CLUSTER, role, index), **extra}


def tfrecord_bytes(records: list[bytes]) -> bytes:
    """TFRecord framing of `records`, as tf.io.TFRecordWriter writes it."""
    out = bytearray()
    for data in records:
        length = struct.pack("<Q", len(data))
        out += length + struct.pack("<I", masked_crc32c(length))
        out += data + struct.pack("<I", masked_crc32c(data))
    return bytes(out)


def starts_of(records: list[bytes]) -> list[int]:
    """Where each record of `tfrecord_bytes(records)` starts, and where the file ends."""
    starts = [0]
    for r in records:
        starts.append(starts[-1] + 12 + len(r) + 4)
    return starts


def write_split(folder: Path, count: int, per_file: int = 3, kind: str = "jsonl") -> list[Any]:
    """Write `count` files of `per_file` records each; return every record, in file order."""
    folder.mkdir(parents=True, exist_ok=True)
    every: list[Any] = []
    for f in range(count):
        rows = [{"file": str(f), "row": str(r)} for r in range(per_file)]
        path = folder / f"training-{f:05d}.{kind}"
        if kind == "jsonl":
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
            every += rows
        elif kind == "csv":
            path.write_text("file,row\n" + "".join(f"{r['file']},{r['row']}\n" for r in rows))
            every += rows
        else:
            data = [json.dumps(r).encode() for r in rows]
            path.write_bytes(tfrecord_bytes(data))
            every += data
    return every


def replica_outputs(
    tmp_path: Path, script: str, tag: str, *, workers: int, env: dict[str, str]
) -> list[Any]:
    """Run `python -c script` under `vtrain local run --workers N` with `env` added; return
    the JSON each replica printed after `tag` (one line per replica that printed one)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--workers",
            str(workers),
            "--output-dir",
            str(tmp_path / "out"),
            "--",
            sys.executable,
            "-c",
            script,
        ],
        env={**os.environ, **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    prefix = f"{tag} "
    return [
        json.loads(line.split(prefix, 1)[1]) for line in done.stdout.splitlines() if prefix in line
    ]
