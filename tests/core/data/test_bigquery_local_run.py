"""`vtrain local run --workers 1` on a bq:// split: two trainers, disjoint streams, all rows."""

from __future__ import annotations

from pathlib import Path

from bq_server import URI, rows_table, serve
from data_files import replica_outputs

# Each replica reads the table twice (two epochs); the server's address reaches it by
# VTRAIN_BIGQUERY_ENDPOINT, the table by AIP_TRAINING_DATA_URI, as Vertex sets it.
SCRIPT = """
import json, vtrain.data
epochs = [[r["id"] for r in vtrain.data.records()] for _ in range(2)]
print("IDS", json.dumps(epochs), flush=True)
"""


def test_two_trainers_read_disjoint_streams_of_one_session(tmp_path: Path) -> None:
    with serve(rows_table(41), batch_rows=4) as server:
        env = {**server.environ, "AIP_TRAINING_DATA_URI": URI, "AIP_DATA_FORMAT": "bigquery"}
        replicas = replica_outputs(tmp_path, SCRIPT, "IDS", workers=1, env=env)
        assert len(replicas) == 2
        for epoch in range(2):
            shares = [epochs[epoch] for epochs in replicas]
            assert all(shares) and not set(shares[0]) & set(shares[1])
            assert sorted(shares[0] + shares[1]) == list(range(41))
        # One session for both trainers and both epochs; each stream read once per epoch.
        (created,) = server.calls("CreateReadSession")
        assert created.max_stream_count == 2
        streams = [r.read_stream for r in server.calls("ReadRows")]
        assert len(streams) == 4 and len(set(streams)) == 2
