"""`files()`: this replica's share of a split's files."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from vtrain.data.bq_table import is_table
from vtrain.data.listing import expand
from vtrain.data.placement import choose_place
from vtrain.data.shares import Share, deal
from vtrain.data.splits import SPLITS, check_split, split_uri
from vtrain.errors import ConfigError, UsageError


def files(
    split: str = "training",
    *,
    rank: int | None = None,
    world_size: int | None = None,
    by_record: bool = False,
    uri: str | None = None,
    environ: Mapping[str, str] | None = None,
    gcs_mount: str | None = None,
    fuse: bool | None = None,
    client: Any = None,
) -> Share:
    """This replica's share of `split` (training, validation or test).

    The files come from the split's AIP_*_DATA_URI in `environ` (default
    `os.environ`), or `uri`, expanded and sorted; `rank` and `world_size` default
    to this replica's place among the cluster's trainers. `by_record=True` gives
    every reader every file and a record stride instead, for a split of fewer
    files than readers. `gcs_mount`, `fuse` and `client` are `open_location`'s,
    for the folders the pattern is expanded in.

    Raises `ConfigError` when the split has no pattern, the pattern matches no
    file or names a BigQuery table, or (by file) there are fewer files than readers.
    """
    env = os.environ if environ is None else environ
    check_split(split)
    if not isinstance(by_record, bool):
        raise UsageError(
            "not a bool", source="by_record", value=by_record, expected="True or False"
        )
    place = choose_place(split, rank, world_size, env)
    if place is None:
        return Share.empty(split)

    pattern, data_format, where = split_uri(split, env, uri)
    if is_table(pattern, data_format):
        raise ConfigError(
            "a BigQuery table has no files",
            source=where,
            value=pattern,
            expected="a file pattern for files(): a local, /gcs/ or gs:// path, wildcards allowed",
            hint="read a table with vtrain.data.records() or vtrain.data.table_rows(), which "
            "share its read streams among the readers",
        )
    if pattern is None:
        raise ConfigError(
            "not set: no data for this split",
            source=SPLITS[split],
            expected="a file pattern such as gs://BUCKET/PATH/training-*.jsonl",
            hint="Vertex sets it for a job on a managed dataset; set it yourself (or pass "
            "uri=) anywhere else",
        )
    names = expand(pattern, where=where, environ=env, gcs_mount=gcs_mount, fuse=fuse, client=client)
    if not names:
        raise ConfigError(
            "matches no file",
            source=where,
            value=pattern,
            expected="a pattern that names at least one file",
        )
    reader, readers = place
    if by_record:
        return Share(
            split=split,
            uri=pattern,
            files=names,
            rank=reader,
            world_size=readers,
            record_shard=(reader, readers),
            total_files=len(names),
            format=data_format,
        )
    check_enough(len(names), readers, where, pattern)
    return Share(
        split=split,
        uri=pattern,
        files=deal(names, reader, readers),
        rank=reader,
        world_size=readers,
        total_files=len(names),
        format=data_format,
    )


def check_enough(count: int, readers: int, where: str, pattern: str) -> None:
    """Refuse to share `count` files by file among more `readers`: some would read nothing."""
    if count < readers:
        raise ConfigError(
            f"{count} file(s) for {readers} readers: some would read nothing",
            source=where,
            value=pattern,
            expected=f"at least {readers} files to share by file",
            hint="pass by_record=True: every reader then reads every file and keeps every "
            f"{ordinal(readers)} record",
        )


def ordinal(number: int) -> str:
    """`number` as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 101st, 111th."""
    if abs(number) % 100 in (11, 12, 13):
        return f"{number}th"
    return f"{number}" + {1: "st", 2: "nd", 3: "rd"}.get(abs(number) % 10, "th")
