"""`vtrain local run --workers 2`: each replica counts its records; together, all, once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from data_files import write_split

# The dataset variables reach every replica from the environment of `vtrain local run`, as
# Vertex gives every replica the same ones.
SCRIPT = """
import json, vtrain.data
seen = [r["file"] + ":" + r["row"] for r in vtrain.data.records()]
print("COUNT", json.dumps(seen), flush=True)
"""


def test_each_replica_reads_its_own_records(tmp_path: Path) -> None:
    every = write_split(tmp_path / "d", 7, per_file=4)
    pattern = str(tmp_path / "d" / "training-*")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--workers",
            "2",
            "--output-dir",
            str(tmp_path / "out"),
            "--",
            sys.executable,
            "-c",
            SCRIPT,
        ],
        env={**os.environ, "AIP_TRAINING_DATA_URI": pattern, "AIP_DATA_FORMAT": "jsonl"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    counts = [
        json.loads(line.split("COUNT ", 1)[1])
        for line in done.stdout.splitlines()
        if "COUNT " in line
    ]
    assert len(counts) == 3 and all(counts)
    seen = [r for c in counts for r in c]
    assert sorted(seen) == sorted(f"{r['file']}:{r['row']}" for r in every)
    assert len(set(seen)) == len(seen) == 28
