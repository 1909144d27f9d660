"""`vtrain local run --workers 2`: each replica counts its records; together, all, once."""

from __future__ import annotations

from pathlib import Path

from data_files import replica_outputs, write_split

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
    env = {"AIP_TRAINING_DATA_URI": pattern, "AIP_DATA_FORMAT": "jsonl"}
    counts = replica_outputs(tmp_path, SCRIPT, "COUNT", workers=2, env=env)
    assert len(counts) == 3 and all(counts)
    seen = [r for c in counts for r in c]
    assert sorted(seen) == sorted(f"{r['file']}:{r['row']}" for r in every)
    assert len(set(seen)) == len(seen) == 28
