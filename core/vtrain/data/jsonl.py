"""JSON Lines: one JSON value per line (an object in Vertex's exports); blank lines are skipped."""

from __future__ import annotations

import io
import json
from collections.abc import Generator, Iterator
from typing import Any, BinaryIO

from vtrain.data.cursor import Cursor
from vtrain.data.lines import LINE_LIMIT, cut, lines, too_long
from vtrain.data.positions import Reopen, damaged, first_bad_utf8


def read_jsonl(
    stream: BinaryIO, where: str, reopen: Reopen, first: int = 0, step: int = 1
) -> Generator[Any, None, int]:
    """Yield records `first`, `first + step` … of the file; return how many lines it has."""
    cursor = Cursor(skip=first, step=step)
    yield from read_jsonl_at(stream, where, reopen, cursor)
    return cursor.records


def read_jsonl_at(stream: BinaryIO, where: str, reopen: Reopen, cursor: Cursor) -> Iterator[Any]:
    """Yield the records `cursor` keeps, from its offset on, moving it past each one."""
    if cursor.offset:
        stream.seek(cursor.offset)
    # Text mode decodes in large chunks, as `for line in open(path)` does; '\n' only, as
    # JSON Lines says, so that lines and bytes agree. A line of ASCII is as long in bytes.
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
    loads, limit = json.loads, LINE_LIMIT
    offset, records, skip, step, count = (
        cursor.offset,
        cursor.records,
        cursor.skip,
        cursor.step,
        cursor.count,
    )
    try:
        for line in lines(text):
            start = offset
            offset += len(line) if line.isascii() else len(line.encode())
            records += 1
            if len(line) >= limit and cut(line):
                raise too_long(where, start, records)
            if skip:
                skip -= 1
                continue
            skip = step - 1
            try:
                record = loads(line)
            except ValueError as e:
                if line.isspace():
                    continue
                torn = "" if line.endswith("\n") else " (the file ends inside it)"
                raise damaged(where, start, f"line {records} is not JSON{torn}: {e}") from None
            count += 1
            cursor.offset, cursor.records, cursor.skip, cursor.count = offset, records, skip, count
            yield record
    except UnicodeDecodeError:
        number, bad = first_bad_utf8(reopen)
        raise damaged(where, bad, f"line {number} is not UTF-8") from None
    cursor.offset, cursor.records, cursor.skip, cursor.count = offset, records, skip, count
