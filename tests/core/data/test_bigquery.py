"""`table_rows()` and `records()` on a bq:// split: the real Storage Read client, a local server.

The server (bq_server.py) speaks the client library's own protos on 127.0.0.1 and
serves Arrow record batches; readers share the streams of one read session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bq_server import TABLE, URI, BigQueryServer, client_for, rows_table, serve
from data_files import replica_env

from vtrain import ConfigError, StorageError, UsageError
from vtrain.data import files, records, table_rows
from vtrain.data.bq_session import Request, load
from vtrain.data.bq_table import parse_table
from vtrain.storage import open_location

ROWS = 23


@pytest.fixture
def server() -> Iterator[BigQueryServer]:
    with serve(rows_table(ROWS)) as state:
        yield state


def ids(rows: Any) -> list[int]:
    return [r["id"] for r in rows]


def read_all(server: BigQueryServer, readers: int, folder: str, **options: Any) -> list[list[int]]:
    """Each reader's ids, reader 0 first (it publishes the session the others wait for)."""
    return [
        ids(
            table_rows(
                uri=URI,
                rank=r,
                world_size=readers,
                session_dir=folder,
                client=client_for(server),
                environ={},
                **options,
            )
        )
        for r in range(readers)
    ]


def test_one_reader_reads_every_row_batch_by_batch(server: BigQueryServer) -> None:
    rows = list(table_rows(uri=URI, environ=server.environ))
    assert rows[1] == {"id": 1, "name": "row-1", "score": 0.25}
    assert ids(rows) == list(range(ROWS))
    (created,) = server.calls("CreateReadSession")
    assert created.parent == "projects/my-project"
    assert created.read_session.table == TABLE
    assert created.max_stream_count == 1
    assert len(server.calls("ReadRows")) == 1  # one stream, served in 8 batches of 3 rows


def test_columns_filter_and_billing_project_reach_the_session(server: BigQueryServer) -> None:
    rows = list(
        table_rows(
            uri=URI,
            selected_fields=["id", "name"],
            row_restriction="id < 5",
            billing_project="billing-proj",
            environ=server.environ,
        )
    )
    assert rows[0] == {"id": 0, "name": "row-0"}
    (created,) = server.calls("CreateReadSession")
    assert created.parent == "projects/billing-proj"
    options = created.read_session.read_options
    assert list(options.selected_fields) == ["id", "name"] and options.row_restriction == "id < 5"


@pytest.mark.parametrize("readers", [2, 3, 5])
def test_readers_share_one_session_disjoint_and_complete(
    server: BigQueryServer, tmp_path: Path, readers: int
) -> None:
    shares = read_all(server, readers, str(tmp_path))
    assert all(shares)
    assert sorted(i for share in shares for i in share) == list(range(ROWS))
    (created,) = server.calls("CreateReadSession")
    assert created.max_stream_count == readers
    # Every reader read streams of that one session, each stream once.
    read = [r.read_stream for r in server.calls("ReadRows")]
    assert len(set(read)) == len(read) == readers
    assert all(name.startswith(created.parent + "/locations/us/sessions/s1/") for name in read)


def test_fewer_streams_than_readers_are_split(tmp_path: Path) -> None:
    with serve(rows_table(ROWS), streams=1) as server:
        shares = read_all(server, 4, str(tmp_path))
        assert all(shares)  # four streams out of one, by splitting
        assert sorted(i for share in shares for i in share) == list(range(ROWS))
        assert server.calls("SplitReadStream")


def test_a_stream_that_cannot_be_split_leaves_a_reader_without_rows(tmp_path: Path) -> None:
    with serve(rows_table(2), streams=1) as server:
        shares = read_all(server, 3, str(tmp_path))
        assert sorted(i for share in shares for i in share) == [0, 1]
        assert shares[2] == []  # two rows: no third stream to give; each row read once


def test_a_second_read_reuses_the_session(server: BigQueryServer, tmp_path: Path) -> None:
    first = read_all(server, 2, str(tmp_path))
    again = read_all(server, 2, str(tmp_path))
    assert first == again
    assert len(server.calls("CreateReadSession")) == 1
    # Another request (other columns) is another session, in a file of its own.
    read_all(server, 2, str(tmp_path), selected_fields=["id"])
    assert len(server.calls("CreateReadSession")) == 2
    assert len(list(tmp_path.iterdir())) == 2


def test_an_expiring_session_is_replaced_by_reader_0(
    server: BigQueryServer, tmp_path: Path
) -> None:
    read_all(server, 2, str(tmp_path))
    (published,) = tmp_path.iterdir()
    data = json.loads(published.read_text())
    data["use_until"] = 1.0  # as if written long ago
    published.write_text(json.dumps(data))
    request = Request(parse_table(URI, "uri"), "projects/my-project", (), "", 2)
    assert load(open_location(str(tmp_path)), request, 2.0) is None
    shares = read_all(server, 2, str(tmp_path))
    assert sorted(i for share in shares for i in share) == list(range(ROWS))
    assert len(server.calls("CreateReadSession")) == 2
    replaced = json.loads(published.read_text())
    assert replaced["session"].endswith("/sessions/s2") and replaced["use_until"] > 1e9
    # Both readers of the second read used the new session's streams.
    assert all("/sessions/s2/" in r.read_stream for r in server.calls("ReadRows")[2:])


def test_a_follower_whose_leader_never_publishes_fails_clearly(
    server: BigQueryServer, tmp_path: Path
) -> None:
    rows = table_rows(
        uri=URI, rank=1, world_size=2, session_dir=str(tmp_path), wait=0.3, environ=server.environ
    )
    with pytest.raises(StorageError, match=r"reader 0 did not publish a BigQuery read session"):
        next(rows)
    assert not server.calls("CreateReadSession")


def test_a_half_written_session_file_is_waited_past(server: BigQueryServer, tmp_path: Path) -> None:
    read_all(server, 2, str(tmp_path))
    (published,) = tmp_path.iterdir()
    published.write_text(published.read_text()[:40])  # a reader saw a write half done
    rows = table_rows(
        uri=URI, rank=1, world_size=2, session_dir=str(tmp_path), wait=0.2, environ=server.environ
    )
    with pytest.raises(StorageError, match="did not publish"):
        next(rows)


def test_the_session_folder_may_be_any_medium(server: BigQueryServer, medium: Any) -> None:
    env = dict(medium.options["environ"])
    if "gcs_mount" in medium.options:
        env["VTRAIN_GCS_MOUNT"] = medium.options["gcs_mount"]
    shares = [
        ids(
            table_rows(
                uri=URI,
                rank=r,
                world_size=2,
                session_dir=medium.sub("sessions"),
                client=client_for(server),
                environ=env,
            )
        )
        for r in range(2)
    ]
    assert sorted(shares[0] + shares[1]) == list(range(ROWS)) and all(shares)
    assert len(server.calls("CreateReadSession")) == 1
    assert open_location(medium.sub("sessions"), environ=env).list()[0].startswith("bq-session-")


def test_the_checkpoint_folder_holds_the_session_by_default(
    server: BigQueryServer, tmp_path: Path
) -> None:
    env = {**server.environ, "AIP_CHECKPOINT_DIR": str(tmp_path / "ck")}
    for r in range(2):
        list(table_rows(uri=URI, rank=r, world_size=2, environ=env))
    assert len(list((tmp_path / "ck" / "bigquery-sessions").iterdir())) == 1


def test_several_readers_need_a_shared_folder(server: BigQueryServer) -> None:
    with pytest.raises(
        ConfigError, match=r"AIP_CHECKPOINT_DIR: several readers share .*session_dir="
    ):
        table_rows(uri=URI, rank=0, world_size=2, environ=server.environ)


def test_placement_follows_the_cluster(server: BigQueryServer, tmp_path: Path) -> None:
    env = {**server.environ, "AIP_TRAINING_DATA_URI": URI, "AIP_VALIDATION_DATA_URI": URI}
    assert list(table_rows(environ=replica_env("ps", **env))) == []
    assert not server.calls("CreateReadSession")
    evaluator = {
        **env,
        "TF_CONFIG": json.dumps(
            {"cluster": {"chief": ["c:1"]}, "task": {"type": "evaluator", "index": 0}}
        ),
    }
    assert ids(table_rows("validation", environ=evaluator)) == list(range(ROWS))
    assert list(table_rows("training", environ=evaluator)) == []
    env["AIP_CHECKPOINT_DIR"] = str(tmp_path)
    chief, worker = replica_env("chief", **env), replica_env("worker", 1, **env)
    shares = [ids(table_rows(environ=chief)), ids(table_rows(environ=worker))]
    assert server.calls("CreateReadSession")[-1].max_stream_count == 3  # chief and 2 workers
    assert len(shares[0]) + len(shares[1]) < ROWS and not set(shares[0]) & set(shares[1])


def test_records_reads_a_bigquery_split(server: BigQueryServer) -> None:
    env = {**server.environ, "AIP_TRAINING_DATA_URI": URI, "AIP_DATA_FORMAT": "bigquery"}
    assert ids(records(environ=env)) == list(range(ROWS))
    assert ids(records(uri=URI, environ=server.environ)) == list(range(ROWS))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda e: files(uri=URI, environ=e), ConfigError, r"uri: a BigQuery table has no files"),
        (
            lambda e: records(uri=URI, format="jsonl", environ=e),
            UsageError,
            r"format: has no meaning",
        ),
        (lambda e: records(uri=URI, by_record=True, environ=e), UsageError, r"by_record: has no"),
        (lambda e: table_rows(uri="", environ=e), UsageError, r"uri: not a table"),
        (lambda e: table_rows(environ=e), ConfigError, r"AIP_TRAINING_DATA_URI: not set"),
        (
            lambda e: table_rows(uri="gs://b/x.csv", environ={**e, "AIP_DATA_FORMAT": "bigquery"}),
            ConfigError,
            r"uri: not a BigQuery table",
        ),
        (
            lambda e: table_rows(uri=URI, selected_fields="id", environ=e),
            UsageError,
            r"selected_fields: not a list of column names \(got 'id'\)",
        ),
        (
            lambda e: table_rows(uri=URI, selected_fields=[3], environ=e),
            UsageError,
            r"selected_fields: not a column name \(got 3\)",
        ),
        (
            lambda e: table_rows(uri=URI, row_restriction="", environ=e),
            UsageError,
            r"row_restriction: not a non-empty string",
        ),
        (
            lambda e: table_rows(uri=URI, billing_project="Bad", environ=e),
            UsageError,
            r"billing_project: not a project id \(got 'Bad'\)",
        ),
        (lambda e: table_rows(uri=URI, wait=0, environ=e), UsageError, r"wait: not a positive"),
        (
            lambda e: table_rows(uri=URI, rank=0, environ=e),
            UsageError,
            r"world_size: rank is given but world_size is not",
        ),
        (
            lambda e: table_rows(uri=URI, rank=0, world_size=2, session_dir="", environ=e),
            UsageError,
            r"session_dir: not a folder",
        ),
    ],
)
def test_errors(server: BigQueryServer, call: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call(server.environ)


def test_a_table_bigquery_refuses_names_it(server: BigQueryServer) -> None:
    rows = table_rows(uri="bq://my-project.my_data.missing", environ=server.environ)
    with pytest.raises(
        StorageError,
        match=r"uri: BigQuery could not create a read session: "
        r"404 Not found: Table .*roles/bigquery.readSessionUser",
    ):
        next(rows)


def test_without_the_extra_the_error_names_it() -> None:
    script = (
        "import sys; sys.modules['google.cloud.bigquery_storage_v1'] = None\n"
        "import vtrain.data\n"
        "try:\n"
        "    vtrain.data.table_rows(uri='bq://my-project.d.t', environ={})\n"
        "except ImportError as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "VTRAIN_BIGQUERY_ENDPOINT"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (
        "MissingExtraError 'google.cloud.bigquery_storage_v1', needed for bq:// tables"
        in done.stdout
    )
    assert '"google-cloud-bigquery-storage>=2.24" (as vtrain[bigquery]' in done.stdout
