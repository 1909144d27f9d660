"""`table_rows()`: this replica's share of a BigQuery table, streamed as dicts.

The table is read with the BigQuery Storage Read API in Arrow format, one
record batch at a time. All readers of a split read the streams of one read
session (see `bq_session`); reader r of n reads streams r, r+n … The client
and pyarrow come with the ``bigquery`` extra and are imported only here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from vtrain.data.bq_session import Request, Session, create_session, shared_session
from vtrain.data.bq_table import PROJECT_ID, Table, parse_table
from vtrain.data.placement import choose_place
from vtrain.data.splits import SPLITS, check_split, split_uri
from vtrain.errors import (
    ConfigError,
    MissingExtraError,
    StorageError,
    UsageError,
    positive_seconds,
)
from vtrain.storage.location import Location
from vtrain.storage.opener import open_location

ENDPOINT_VARIABLE = "VTRAIN_BIGQUERY_ENDPOINT"
"""``host:port`` of a Storage Read API server reached without TLS or credentials (a test
server, an emulator); unset, the client talks to BigQuery with the default credentials."""
SESSIONS_FOLDER = "bigquery-sessions"
SESSION_WAIT = 600.0
"""Seconds a reader waits for the read session reader 0 creates and shares (not a peer's wait)."""
_NAME = "bq:// tables"


def _modules() -> tuple[Any, Any]:
    """(google.cloud.bigquery_storage_v1, pyarrow), or the extra that installs them."""
    try:
        from google.cloud import bigquery_storage_v1  # type: ignore[attr-defined,unused-ignore]
    except ImportError as e:
        raise MissingExtraError(_NAME, "bigquery", module="google.cloud.bigquery_storage_v1") from e
    try:
        import pyarrow  # type: ignore[import-untyped,unused-ignore]
        import pyarrow.ipc  # type: ignore[import-untyped,unused-ignore]
    except ImportError as e:
        raise MissingExtraError(_NAME, "bigquery", module="pyarrow") from e
    return bigquery_storage_v1, pyarrow


def bigquery_client(environ: Mapping[str, str] | None = None) -> Any:
    """A `BigQueryReadClient`; plain and anonymous against VTRAIN_BIGQUERY_ENDPOINT when set."""
    env = os.environ if environ is None else environ
    storage_v1, _ = _modules()
    endpoint = env.get(ENDPOINT_VARIABLE)
    if not endpoint:
        from google.auth import exceptions

        try:
            return storage_v1.BigQueryReadClient()
        except exceptions.DefaultCredentialsError as e:
            raise ConfigError(
                "no Google credentials to read BigQuery with",
                source="bq:// tables",
                hint="on Vertex the job's service account is used; elsewhere run `gcloud auth "
                f"application-default login`, or set {ENDPOINT_VARIABLE} to a local server",
            ) from e
    import grpc  # type: ignore[import-untyped,unused-ignore]
    from google.cloud.bigquery_storage_v1.services.big_query_read.transports import (  # type: ignore[import-not-found,unused-ignore]
        BigQueryReadGrpcTransport,
    )

    # A channel given to the transport makes it skip the credential lookup altogether.
    transport = BigQueryReadGrpcTransport(channel=grpc.insecure_channel(endpoint))
    return storage_v1.BigQueryReadClient(transport=transport)


def table_rows(
    split: str = "training",
    *,
    uri: str | None = None,
    selected_fields: Sequence[str] | None = None,
    row_restriction: str | None = None,
    billing_project: str | None = None,
    rank: int | None = None,
    world_size: int | None = None,
    session_dir: str | None = None,
    wait: float = SESSION_WAIT,
    client: Any = None,
    storage_client: Any = None,
    environ: Mapping[str, str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Stream this replica's rows of the BigQuery table `split` names, as dicts.

    The table is the split's AIP_*_DATA_URI (or `uri`), ``bq://PROJECT.DATASET.TABLE``.
    `selected_fields` and `row_restriction` go to the read session; the session
    is billed to `billing_project`, else the table's project. With several
    readers, reader 0 publishes the session in `session_dir`, else a folder of
    AIP_CHECKPOINT_DIR, and the others wait for it up to `wait` seconds; `rank`
    and `world_size` default to this replica's place among the readers.
    `client` is a `BigQueryReadClient`; `storage_client` one for a gs:// folder.
    Variables are read from `environ` (default `os.environ`).
    """
    env = os.environ if environ is None else environ
    check_split(split)
    if uri is not None and (not isinstance(uri, str) or not uri):
        raise UsageError(
            "not a table", source="uri", value=uri, expected="bq://PROJECT.DATASET.TABLE"
        )
    fields = _check_fields(selected_fields)
    _check_text(row_restriction, "row_restriction", "a SQL filter such as 'age > 3'")
    _check_text(billing_project, "billing_project", "a project id")
    if billing_project is not None and not PROJECT_ID.fullmatch(billing_project):
        raise UsageError(
            "not a project id",
            source="billing_project",
            value=billing_project,
            expected="6-30 lowercase letters, digits or '-', starting with a letter",
        )
    positive_seconds(wait, "wait", "not a positive number")
    place = choose_place(split, rank, world_size, env)
    if place is None:
        return iter(())
    table, where = split_table(split, env, uri)
    reader, readers = place
    if client is None:
        client = bigquery_client(env)
    else:
        _modules()  # pyarrow decodes the batches, whoever made the client
    folder = session_folder(session_dir, env, storage_client) if readers > 1 else None
    request = Request(
        table,
        f"projects/{billing_project or table.project}",
        fields,
        row_restriction or "",
        readers,
    )
    # Checked above, read below: a bad argument fails at the call, not at the first row.
    return _read(client, request, reader, folder, float(wait), where)


def split_table(split: str, environ: Mapping[str, str], uri: str | None) -> tuple[Table, str]:
    """(the BigQuery table a split names, where it was named: its AIP_*_DATA_URI or `uri`)."""
    text, _, where = split_uri(split, environ, uri)
    if text is None:
        raise ConfigError(
            "not set: no data for this split",
            source=SPLITS[split],
            expected="a table such as bq://PROJECT.DATASET.TABLE",
        )
    return parse_table(text, where), where


def _check_fields(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise UsageError(
            "not a list of column names",
            source="selected_fields",
            value=value,
            expected='a list such as ["age", "label"] (a lone string is not one)',
        )
    for name in value:
        if not isinstance(name, str) or not name:
            raise UsageError(
                "not a column name", source="selected_fields", value=name, expected="a string"
            )
    return tuple(value)


def _check_text(value: object, source: str, expected: str) -> None:
    if value is not None and (not isinstance(value, str) or not value):
        raise UsageError("not a non-empty string", source=source, value=value, expected=expected)


def session_folder(session_dir: object, env: Mapping[str, str], storage_client: Any) -> Location:
    """Where reader 0 publishes the read session: a folder every replica of the job sees."""
    if session_dir is not None:
        if not isinstance(session_dir, str) or not session_dir:
            raise UsageError(
                "not a folder",
                source="session_dir",
                value=session_dir,
                expected="a path, a /gcs/ path or a gs:// URI every replica sees",
            )
        return open_location(session_dir, environ=env, client=storage_client)
    # Set for the job (by Vertex, or by `vtrain local run`), the checkpoint folder is the
    # same on every replica; the default one of a script run by hand is not.
    if env.get("AIP_CHECKPOINT_DIR") or env.get("VTRAIN_OUTPUT_DIR"):
        from vtrain.context import RunContext

        checkpoints = RunContext.from_env(env).checkpoint_dir
        return open_location(checkpoints, environ=env, client=storage_client).join(SESSIONS_FOLDER)
    raise ConfigError(
        "several readers share a BigQuery table, but no folder every replica sees is set",
        source="AIP_CHECKPOINT_DIR",
        value=None,
        expected="a folder shared by the job's replicas (a gs:// or /gcs/ URI on a cluster)",
        hint="Vertex sets AIP_CHECKPOINT_DIR; elsewhere set it, or VTRAIN_OUTPUT_DIR, or pass "
        "session_dir=: reader 0 publishes the read session there for the others",
    )


def _read(
    client: Any, request: Request, reader: int, folder: Location | None, wait: float, where: str
) -> Iterator[dict[str, Any]]:
    session = open_session(client, request, reader, folder, wait, where)
    for stream in session.streams_of(reader, request.readers):
        yield from stream_rows(client, stream, 0, session, request.table, where)


def open_session(
    client: Any, request: Request, reader: int, folder: Location | None, wait: float, where: str
) -> Session:
    """The read session every reader of `request` uses: made by reader 0, read by the others."""
    storage_v1, _ = _modules()
    from google.api_core import exceptions

    def make() -> Session:
        try:
            return create_session(client, request, storage_v1.types, time.time())
        except exceptions.GoogleAPIError as e:
            raise _refused(e, "create a read session", request.table, where) from e

    return shared_session(make, request, reader=reader, folder=folder, wait=wait)


def stream_rows(
    client: Any, stream: str, offset: int, session: Session, table: Table, where: str
) -> Iterator[dict[str, Any]]:
    """The rows of one read stream of `session`, from row `offset` on, as dicts."""
    _, pyarrow = _modules()
    from google.api_core import exceptions

    schema = pyarrow.ipc.read_schema(pyarrow.py_buffer(session.schema))
    try:
        # The client's stream reconnects at the current offset after a transient error.
        for response in client.read_rows(stream, offset=offset):
            batch = response.arrow_record_batch.serialized_record_batch
            if batch:
                decoded = pyarrow.ipc.read_record_batch(pyarrow.py_buffer(batch), schema)
                yield from decoded.to_pylist()
    except exceptions.GoogleAPIError as e:
        raise _refused(e, f"read stream {stream}", table, where) from e


def _refused(error: Exception, what: str, table: Table, where: str) -> StorageError:
    return StorageError(
        f"BigQuery could not {what}: {error}",
        source=where,
        value=table.uri,
        hint="check the table name, and that the job's service account may read it "
        "(roles/bigquery.dataViewer and roles/bigquery.readSessionUser)",
    )
