"""One BigQuery read session for all the readers of a table, published by reader 0.

Streams of two read sessions need not split a table the same way, so the
readers must share the streams of one session. Reader 0 creates it (one
stream per reader where BigQuery allows) and writes its name, streams, schema
and expiry as a small JSON file into a folder every replica sees; the others
wait for that file. The file's name is a hash of what was asked (table,
columns, filter, readers), so the next epoch, or a restarted job, reuses a
session until it nears its expiry; reader 0 then replaces it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

from vtrain.data.bq_table import Table
from vtrain.errors import StorageError
from vtrain.frozen import Frozen
from vtrain.storage.atomic import write_atomic
from vtrain.storage.location import Location

VERSION = 1
MARGIN = 30 * 60.0
"""Seconds before a session expires when it is no longer handed out: an epoch must fit."""
_FIRST_POLL, _MAX_POLL = 0.05, 2.0


class Request(Frozen):
    """What a session is asked for; equal requests may share one session."""

    __slots__ = ("table", "parent", "selected_fields", "row_restriction", "readers")
    table: Table
    parent: str
    selected_fields: tuple[str, ...]
    row_restriction: str
    readers: int

    def __init__(
        self,
        table: Table,
        parent: str,
        selected_fields: tuple[str, ...],
        row_restriction: str,
        readers: int,
    ) -> None:
        self._init_from(locals())

    def to_json(self) -> dict[str, Any]:
        """The request as the session file records it."""
        return {
            "table": self.table.path,
            "parent": self.parent,
            "selected_fields": list(self.selected_fields),
            "row_restriction": self.row_restriction,
            "readers": self.readers,
            "format": "arrow",
        }

    @property
    def file_name(self) -> str:
        """The session file's name: a hash of the request, the same on every replica."""
        import hashlib

        text = json.dumps(self.to_json(), sort_keys=True).encode()
        return f"bq-session-{hashlib.sha256(text).hexdigest()[:24]}.json"


class Session(Frozen):
    """A read session: its streams in order, the Arrow schema, and when to stop using it."""

    __slots__ = ("name", "streams", "schema", "use_until")
    name: str
    streams: tuple[str, ...]
    schema: bytes
    use_until: float

    def __init__(
        self, name: str, streams: tuple[str, ...], schema: bytes, use_until: float
    ) -> None:
        self._init_from(locals())

    def streams_of(self, reader: int, readers: int) -> tuple[str, ...]:
        """Reader `reader`'s streams: every `readers`-th from `reader`, so each has one reader."""
        return self.streams[reader::readers]


def create_session(client: Any, request: Request, types: Any, now: float) -> Session:
    """A new read session for `request`, split until it has a stream per reader if it can."""
    requested = types.ReadSession(
        table=request.table.path,
        data_format=types.DataFormat.ARROW,
        read_options=types.ReadSession.TableReadOptions(
            selected_fields=list(request.selected_fields),
            row_restriction=request.row_restriction,
        ),
    )
    made = client.create_read_session(
        parent=request.parent, read_session=requested, max_stream_count=request.readers
    )
    streams = _split(client, [s.name for s in made.streams], request.readers, types)
    expire = made.expire_time.timestamp() if made.expire_time else 0.0
    # A session that lives less than twice the margin is used for half of what is left.
    left = expire - now if expire > 0 else 6 * 3600.0
    use_until = now + max(left - MARGIN, left / 2)
    schema = bytes(made.arrow_schema.serialized_schema)
    return Session(made.name, tuple(streams), schema, use_until)


def _split(client: Any, streams: list[str], readers: int, types: Any) -> list[str]:
    # BigQuery may give fewer streams than asked (a small table); a split stream's two
    # halves hold the rows of the original, which is then not read itself.
    whole: set[str] = set()
    while len(streams) < readers and len(whole) < len(streams):
        i = next(i for i, name in enumerate(streams) if name not in whole)
        done = client.split_read_stream(
            request=types.SplitReadStreamRequest(name=streams[i], fraction=0.5)
        )
        if not done.primary_stream.name or not done.remainder_stream.name:
            whole.add(streams[i])
            continue
        streams[i : i + 1] = [done.primary_stream.name, done.remainder_stream.name]
    return streams


def shared_session(
    make: Callable[[], Session],
    request: Request,
    *,
    reader: int,
    folder: Location | None,
    wait: float,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> Session:
    """The session every reader of `request` uses: made by reader 0, read by the others."""
    if request.readers == 1 or folder is None:
        return make()
    name = request.file_name
    if reader == 0:
        found = load(folder, request, clock())
        if found is None:
            found = make()
            publish(folder, name, request, found)
        return found
    deadline = clock() + wait
    delay = _FIRST_POLL
    while True:
        found = load(folder, request, clock())
        if found is not None:
            return found
        left = deadline - clock()
        if left <= 0:
            raise StorageError(
                f"reader 0 did not publish a BigQuery read session within {wait:g} s",
                source=folder.uri,
                path=name,
                expected=f"a session file for {request.table.uri} written by reader 0 "
                "(the chief, where it trains)",
                hint="check reader 0's log: it creates the session; if it starts reading "
                "much later than this replica, pass a longer wait=",
            )
        sleep(min(delay, left))
        delay = min(delay * 2, _MAX_POLL)


def load(folder: Location, request: Request, now: float) -> Session | None:
    """The published session for `request` if it is whole, matches and is still fresh."""
    name = request.file_name
    if not folder.exists(name):
        return None
    raw = folder.read_bytes(name)
    import base64

    try:
        data = json.loads(raw)
        found = Session(
            str(data["session"]),
            tuple(str(s) for s in data["streams"]),
            base64.b64decode(data["schema"], validate=True),
            float(data["use_until"]),
        )
        current = data["version"] == VERSION and data["request"] == request.to_json()
    except (ValueError, KeyError, TypeError):
        return None  # half written, damaged or from another version: as if absent
    return found if current and now < found.use_until else None


def publish(folder: Location, name: str, request: Request, session: Session) -> None:
    """Write the session file so that a reader sees the old one or the new one, never half."""
    import base64

    text = json.dumps(
        {
            "version": VERSION,
            "request": request.to_json(),
            "session": session.name,
            "streams": list(session.streams),
            "schema": base64.b64encode(session.schema).decode(),
            "use_until": session.use_until,
        },
        sort_keys=True,
    ).encode()
    folder.makedirs()
    if folder.atomic_rename and folder.path is not None:
        write_atomic(os.path.join(folder.path, name), text)
    else:
        # An object (gs://, or a file on the FUSE mount once closed) appears whole; a reader
        # of a plain folder treated as FUSE may see it half written, and `load` skips that.
        folder.write_bytes(name, text)
