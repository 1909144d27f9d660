"""A BigQuery Storage Read API stand-in: a real gRPC server on 127.0.0.1 serving one table.

It speaks google.cloud.bigquery.storage.v1.BigQueryRead with the client library's
own proto-plus types, and serves an in-memory pyarrow table as Arrow IPC, as
BigQuery does: the schema in the session, record batches in ReadRows. Streams
are row ranges; SplitReadStream halves one. Nothing here reaches Google.
"""

from __future__ import annotations

import contextlib
import datetime
import itertools
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

TABLE = "projects/my-project/datasets/my_data/tables/rows"
URI = "bq://my-project.my_data.rows"


def rows_table(count: int) -> Any:
    """A table of `count` rows: an int id, a string and a float."""
    import pyarrow as pa

    return pa.table(
        {
            "id": pa.array(range(count), pa.int64()),
            "name": pa.array([f"row-{i}" for i in range(count)]),
            "score": pa.array([i / 4 for i in range(count)], pa.float64()),
        }
    )


@dataclass
class BigQueryServer:
    """What the server serves, and every request it got."""

    address: str
    table: Any
    streams: int | None = None
    """Streams per session: None gives what the client asks for (max_stream_count)."""
    batch_rows: int = 3
    expire_in: float = 6 * 3600.0
    requests: list[tuple[str, Any]] = field(default_factory=list)
    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Stream name -> the rows [start, end) it holds."""
    columns: dict[str, list[str]] = field(default_factory=dict)
    """Session name -> the columns it selected ([] for all)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def calls(self, method: str) -> list[Any]:
        """The requests of one method, in order."""
        with self.lock:
            return [r for m, r in self.requests if m == method]

    @property
    def environ(self) -> dict[str, str]:
        """What points vtrain's client at this server."""
        return {"VTRAIN_BIGQUERY_ENDPOINT": self.address}


def _handlers(state: BigQueryServer) -> dict[str, Any]:
    import grpc
    from google.cloud.bigquery_storage_v1 import types

    counter = itertools.count(1)

    def record(method: str, request: Any) -> None:
        with state.lock:
            state.requests.append((method, request))

    def selected(request_fields: list[str]) -> Any:
        return state.table.select(list(request_fields)) if request_fields else state.table

    def create(request: Any, context: Any) -> Any:
        record("CreateReadSession", request)
        if request.read_session.table != TABLE:
            context.abort(
                grpc.StatusCode.NOT_FOUND, f"Not found: Table {request.read_session.table}"
            )
        fields = list(request.read_session.read_options.selected_fields)
        count = state.streams or max(request.max_stream_count, 1)
        rows = state.table.num_rows
        name = f"{request.parent}/locations/us/sessions/s{next(counter)}"
        cuts = [rows * k // count for k in range(count + 1)]
        session = types.ReadSession(
            name=name,
            table=request.read_session.table,
            data_format=types.DataFormat.ARROW,
            read_options=request.read_session.read_options,
            expire_time=datetime.datetime.now(datetime.timezone.utc)
            + datetime.timedelta(seconds=state.expire_in),
        )
        session.arrow_schema.serialized_schema = selected(fields).schema.serialize().to_pybytes()
        with state.lock:
            for k in range(count):
                stream = f"{name}/streams/{k}"
                state.ranges[stream] = (cuts[k], cuts[k + 1])
                session.streams.append(types.ReadStream(name=stream))
            state.columns[name] = fields
        return session

    def read(request: Any, context: Any) -> Iterator[Any]:
        record("ReadRows", request)
        with state.lock:
            if request.read_stream not in state.ranges:
                context.abort(grpc.StatusCode.NOT_FOUND, f"no stream {request.read_stream}")
            start, end = state.ranges[request.read_stream]
            fields = state.columns[request.read_stream.rsplit("/streams/", 1)[0]]
        table = selected(fields).slice(start + request.offset, max(end - start - request.offset, 0))
        for batch in table.to_batches(max_chunksize=state.batch_rows):
            response = types.ReadRowsResponse(row_count=batch.num_rows)
            response.arrow_record_batch.serialized_record_batch = batch.serialize().to_pybytes()
            response.arrow_record_batch.row_count = batch.num_rows
            yield response

    def split(request: Any, context: Any) -> Any:
        record("SplitReadStream", request)
        with state.lock:
            start, end = state.ranges[request.name]
            if end - start < 2:
                return types.SplitReadStreamResponse()  # cannot be split any further
            cut = start + int((end - start) * request.fraction)
            primary, remainder = f"{request.name}.0", f"{request.name}.1"
            state.ranges[primary], state.ranges[remainder] = (start, cut), (cut, end)
        return types.SplitReadStreamResponse(
            primary_stream=types.ReadStream(name=primary),
            remainder_stream=types.ReadStream(name=remainder),
        )

    return {
        "CreateReadSession": grpc.unary_unary_rpc_method_handler(
            create,
            request_deserializer=types.CreateReadSessionRequest.deserialize,
            response_serializer=types.ReadSession.serialize,
        ),
        "ReadRows": grpc.unary_stream_rpc_method_handler(
            read,
            request_deserializer=types.ReadRowsRequest.deserialize,
            response_serializer=types.ReadRowsResponse.serialize,
        ),
        "SplitReadStream": grpc.unary_unary_rpc_method_handler(
            split,
            request_deserializer=types.SplitReadStreamRequest.deserialize,
            response_serializer=types.SplitReadStreamResponse.serialize,
        ),
    }


@contextlib.contextmanager
def serve(table: Any, **options: Any) -> Iterator[BigQueryServer]:
    """Serve `table` on a free loopback port until the block ends."""
    import grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    port = server.add_insecure_port("127.0.0.1:0")
    state = BigQueryServer(address=f"127.0.0.1:{port}", table=table, **options)
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "google.cloud.bigquery.storage.v1.BigQueryRead", _handlers(state)
            ),
        )
    )
    server.start()
    try:
        yield state
    finally:
        server.stop(grace=None)


def client_for(server: BigQueryServer) -> Any:
    """The library's real BigQueryReadClient, over a plain channel to `server`."""
    import grpc
    from google.cloud.bigquery_storage_v1 import BigQueryReadClient
    from google.cloud.bigquery_storage_v1.services.big_query_read.transports import (
        BigQueryReadGrpcTransport,
    )

    channel = grpc.insecure_channel(server.address)
    return BigQueryReadClient(transport=BigQueryReadGrpcTransport(channel=channel))
