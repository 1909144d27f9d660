"""`records()` and `read_share()`: stream a share's records, one at a time, file after file.

Nothing holds more than the reader's buffer: a local file is read through a
buffered stream, a gs:// object through the client's chunked reader (one
range request per chunk), never downloaded whole.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO

from vtrain.data.bq_table import is_table
from vtrain.data.files import files
from vtrain.data.shares import Share
from vtrain.data.splits import FORMAT_VARIABLE, SPLITS, check_split
from vtrain.errors import UsageError
from vtrain.storage.location import Location, split_gs_uri
from vtrain.storage.opener import open_location

FORMATS = ("jsonl", "csv", "tf-record")
"""The canonical names of the record formats of files, as AIP_DATA_FORMAT spells them."""
# Vertex's AIP_DATA_FORMAT names, and the other spellings people use for them.
_ALIASES = {
    "jsonl": "jsonl",
    "json": "jsonl",
    "ndjson": "jsonl",
    "csv": "csv",
    "tf-record": "tf-record",
    "tfrecord": "tf-record",
    "tfrecords": "tf-record",
}
_SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tfrecord": "tf-record",
    ".tfrecords": "tf-record",
    ".tfr": "tf-record",
}


def check_format(value: object, source: str = "format") -> str:
    """The canonical name of the record format `value` (jsonl, csv, tf-record), from any of
    its spellings ("json", "ndjson", "tfrecord" …); an unknown one raises `UsageError`
    that names `source`, where the value came from."""
    if not isinstance(value, str) or value.lower() not in _ALIASES:
        raise UsageError(
            "unknown record format", source=source, value=value, expected=" or ".join(FORMATS)
        )
    return _ALIASES[value.lower()]


def format_of(name: str) -> str:
    """The record format the suffix of the file `name` names; a UsageError when it names none."""
    suffix = os.path.splitext(name)[1].lower()
    if suffix not in _SUFFIXES:
        raise UsageError(
            "cannot tell the record format from the file name",
            source=name,
            value=suffix or name,
            expected="a suffix of " + ", ".join(_SUFFIXES),
            hint='pass format="jsonl", "csv" or "tf-record", or set AIP_DATA_FORMAT',
        )
    return _SUFFIXES[suffix]


class Opener:
    """Opens a share's files: locally, through the FUSE mount, or through one storage client."""

    def __init__(self, environ: Mapping[str, str], client: Any) -> None:
        self.environ, self.client = environ, client
        self.buckets: dict[str, Location] = {}

    def __call__(self, name: str) -> BinaryIO:
        if name.startswith("gs://"):
            bucket, key = split_gs_uri(name)
            if bucket not in self.buckets:
                from vtrain.storage.gcs import GcsLocation

                self.buckets[bucket] = GcsLocation(bucket, client=self.client, environ=self.environ)
            return self.buckets[bucket].open_read(key)
        folder, base = os.path.split(os.path.abspath(name))
        return open_location(folder, fuse=False, environ=self.environ).open_read(base)


def read_share(
    share: Share,
    *,
    format: str | None = None,
    check_crc: bool = True,
    environ: Mapping[str, str] | None = None,
    client: Any = None,
) -> Iterator[Any]:
    """Stream the records of `share`: dicts (JSON Lines, CSV) or bytes (TFRecord).

    The format is `format`, else the share's AIP_DATA_FORMAT, else each file's
    suffix. `check_crc=False` skips TFRecord data checksums. gs:// files are read
    through `client` (default: one made from `environ`, itself `os.environ` by default).
    A bad argument raises `UsageError` at the call, not at the first record.
    """
    if not isinstance(share, Share):
        raise UsageError(
            "not a Share", source="share", value=share, expected="what vtrain.data.files() returns"
        )
    chosen = check_format(format) if format is not None else None
    if chosen is None and share.format is not None:
        chosen = check_format(share.format, "AIP_DATA_FORMAT")
    if not isinstance(check_crc, bool):
        raise UsageError(
            "not a bool", source="check_crc", value=check_crc, expected="True or False"
        )
    opener = Opener(os.environ if environ is None else environ, client)
    # Checked above, read below: a bad argument fails at the call, not at the first record.
    return _stream(share, chosen, check_crc, opener)


def _stream(share: Share, chosen: str | None, check_crc: bool, opener: Opener) -> Iterator[Any]:
    from vtrain.data.csv_records import read_csv_at
    from vtrain.data.cursor import Cursor
    from vtrain.data.jsonl import read_jsonl_at
    from vtrain.data.tfrecord import read_tfrecord_at

    k, n = share.record_shard
    seen = 0
    for name in share.files:
        kind = chosen or format_of(name)
        cursor = Cursor(skip=(k - seen) % n, step=n)

        def reopen(name: str = name) -> BinaryIO:
            return opener(name)

        with opener(name) as stream:
            if kind == "jsonl":
                yield from read_jsonl_at(stream, name, reopen, cursor)
            elif kind == "csv":
                yield from read_csv_at(stream, name, reopen, cursor)
            else:
                yield from read_tfrecord_at(stream, name, cursor, check_crc=check_crc)
        seen += cursor.records


def records(
    split: str = "training",
    *,
    format: str | None = None,
    by_record: bool = False,
    check_crc: bool = True,
    rank: int | None = None,
    world_size: int | None = None,
    uri: str | None = None,
    environ: Mapping[str, str] | None = None,
    gcs_mount: str | None = None,
    fuse: bool | None = None,
    client: Any = None,
) -> Iterator[Any]:
    """Stream the records of this replica's share of `split`; see `files` and `read_share`.

    `rank`, `world_size`, `by_record`, `uri`, `environ`, `gcs_mount`, `fuse` and
    `client` choose the share, as for `files`; `format` and `check_crc` read it, as for
    `read_share`. A BigQuery split (a bq:// URI, or AIP_DATA_FORMAT=bigquery) gives its
    rows as dicts, through `table_rows` with its defaults; `client` is then the storage
    client for a gs:// session folder, and the options only files have raise `UsageError`.
    """
    env = os.environ if environ is None else environ
    variable = SPLITS[check_split(split)]
    if is_table(env.get(variable) if uri is None else uri, env.get(FORMAT_VARIABLE)):
        check_table_options(format=format, gcs_mount=gcs_mount, fuse=fuse, by_record=by_record)
        from vtrain.data.bigquery import table_rows

        return table_rows(
            split, uri=uri, rank=rank, world_size=world_size, environ=env, storage_client=client
        )
    share = files(
        split,
        rank=rank,
        world_size=world_size,
        by_record=by_record,
        uri=uri,
        environ=environ,
        gcs_mount=gcs_mount,
        fuse=fuse,
        client=client,
    )
    return read_share(share, format=format, check_crc=check_crc, environ=environ, client=client)


def check_table_options(
    *, format: object, gcs_mount: object, fuse: object, by_record: object
) -> None:
    """Refuse the options that only files have, for a BigQuery table."""
    for name, value in (("format", format), ("gcs_mount", gcs_mount), ("fuse", fuse)):
        if value is not None:
            raise UsageError(
                "has no meaning for a BigQuery table",
                source=name,
                value=value,
                expected="None (rows come from the table in its own types)",
            )
    if by_record is not False:
        raise UsageError(
            "has no meaning for a BigQuery table",
            source="by_record",
            value=by_record,
            expected="False (readers share the table by read stream)",
        )
