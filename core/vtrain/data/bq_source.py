"""`BigQuerySource`: a table's read session as a stream reads it, resumed at a row offset.

The Storage Read API reads a stream of a live session from any row offset, so
a lane here is a stream and a row offset: the offset is the lane's cursor.
The streams of one session split the table one way; streams of another
session need not split it the same way, so a resume reads the streams of the
session its position names, and refuses once that session has expired: its
rows can then not be dealt out exactly.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator, Mapping
from typing import Any

from vtrain.data.bigquery import (
    SESSION_WAIT,
    bigquery_client,
    open_session,
    session_folder,
    split_table,
    stream_rows,
)
from vtrain.data.bq_session import Request, Session
from vtrain.data.bq_table import BIGQUERY
from vtrain.data.lanes import Lane
from vtrain.data.source import Learn
from vtrain.errors import ConfigError
from vtrain.storage.location import Location


class BigQuerySource:
    """The streams of one read session of a table, and how to read a lane of them."""

    sizes = None
    """Streams have no size a position could check; the session's name stands for them."""

    def __init__(
        self,
        client: Any,
        request: Request,
        session: Session,
        *,
        where: str,
        reader: int,
        folder: Location | None,
    ) -> None:
        self.client, self.request, self.session = client, request, session
        self.where, self.reader, self.folder = where, reader, folder
        self.identity: Mapping[str, Any] = {
            "uri": request.table.uri,
            "format": BIGQUERY,
            "session": session.name,
            "schema": base64.b64encode(session.schema).decode(),
            "use_until": session.use_until,
            "files": tuple((name, None, session.name) for name in session.streams),
        }
        """What a position records: the session, its streams, and until when it may be read."""

    @classmethod
    def open(
        cls,
        split: str,
        *,
        uri: str | None,
        place: tuple[int, int],
        resume: Mapping[str, Any] | None,
        environ: Mapping[str, str],
        storage_client: Any,
    ) -> BigQuerySource:
        """The session to read: the one `resume` names when it is a BigQuery position (refused
        once expired), else the one every reader shares (reader 0 makes it)."""
        table, where = split_table(split, environ, uri)
        reader, readers = place
        client = bigquery_client(environ)
        folder = session_folder(None, environ, storage_client) if readers > 1 else None
        request = Request(table, f"projects/{table.project}", (), "", readers)
        recorded = resume.get("source") if resume is not None else None
        if isinstance(recorded, Mapping) and recorded.get("format") == BIGQUERY:
            session = _recorded_session(recorded, table.uri)
            return cls(client, request, session, where=where, reader=reader, folder=folder)
        session = open_session(client, request, reader, folder, SESSION_WAIT, where)
        return cls(client, request, session, where=where, reader=reader, folder=folder)

    @property
    def names(self) -> tuple[str, ...]:
        """The session's streams, by index."""
        return self.session.streams

    @property
    def count(self) -> int:
        """How many streams the session has."""
        return len(self.session.streams)

    def check(self, recorded: Mapping[str, Any], where: str) -> None:
        """Refuse a position of files: a table's position names its read session."""
        if recorded.get("format") != BIGQUERY or recorded.get("session") != self.session.name:
            raise ConfigError(
                "a position taken on records of another format",
                source=where,
                path="source.format",
                value=recorded.get("format"),
                expected=f'"{BIGQUERY}": this stream reads {self.request.table.uri}',
            )

    def read(self, lane: Lane, learn: Learn) -> Iterator[Any]:
        """Yield the rows `lane` keeps, stream after stream, from its row offset on."""
        while lane.files:
            index = lane.files[0]
            name = self.session.streams[index]
            offset, skip, step, count = lane.offset, lane.skip, lane.step, lane.count
            table = self.request.table
            for row in stream_rows(self.client, name, offset, self.session, table, self.where):
                offset += 1
                if skip:
                    skip -= 1
                    continue
                skip = step - 1
                count += 1
                lane.offset = lane.records = offset
                lane.skip, lane.count = skip, count
                yield row
            lane.offset = lane.records = offset
            lane.skip, lane.count = skip, count
            learn(index, lane.records)
            lane.next_file()

    def for_epoch(self, world_size: int) -> BigQuerySource:
        """The source of the next epoch: the session shared by `world_size` readers."""
        request = self.request.replace(readers=world_size)
        session = open_session(
            self.client, request, self.reader, self.folder, SESSION_WAIT, self.where
        )
        if session == self.session:
            return self
        return BigQuerySource(
            self.client,
            request,
            session,
            where=self.where,
            reader=self.reader,
            folder=self.folder,
        )


def _recorded_session(recorded: Mapping[str, Any], table: str) -> Session:
    """The read session a position names, unless it is another table's or has expired."""
    if recorded.get("uri") != table:
        raise ConfigError(
            "a position of another table",
            source="resume",
            path="source.uri",
            value=recorded.get("uri"),
            expected=f"{table}, the table this stream reads",
        )
    try:
        session = Session(
            str(recorded["session"]),
            tuple(str(row[0]) for row in recorded["files"]),
            base64.b64decode(recorded["schema"], validate=True),
            float(recorded["use_until"]),
        )
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise ConfigError(
            f"a damaged position: {e}",
            source="resume",
            path="source",
            expected="the read session a Stream.state() records",
        ) from None
    if time.time() >= session.use_until:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(session.use_until))
        raise ConfigError(
            f"the position's BigQuery read session may be read only until {stamp}",
            source="resume",
            path="source.session",
            value=session.name,
            expected="a session that still lives: BigQuery ends a read session after 6 hours, "
            "and the streams of a new one split the table another way, so what is left of the "
            "epoch cannot be dealt out exactly",
            hint="start the epoch over (resume=None), or resume sooner after a stop",
        )
    return session
