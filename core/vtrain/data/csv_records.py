"""CSV with a header row: each later row becomes a dict keyed by the header's names.

A UTF-8 byte-order mark before the header (as spreadsheet programs write) is no
part of the first name. A header that names a column twice is refused: one of
the two would hide the other in every row's dict.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Generator, Iterator
from typing import BinaryIO, TextIO

from vtrain.data.cursor import Cursor
from vtrain.data.lines import LINE_LIMIT, cut, lines, too_long
from vtrain.data.positions import Reopen, damaged, first_bad_utf8, line_offset
from vtrain.errors import StorageError

FIELD_LIMIT = 1 << 24
"""The longest CSV field read, in characters (16 Mi), unless `csv.field_size_limit()` is higher.

The csv module's own limit, 128 Ki, refuses valid files that hold long texts. A
bound still stops a stray quote from reading the rest of a large file into memory
as one field. The csv module has one limit for the whole process: reading raises
it to this, and never lowers it.
"""
_BOM = "\ufeff"


def read_csv(
    stream: BinaryIO, where: str, reopen: Reopen, first: int = 0, step: int = 1
) -> Generator[dict[str, str], None, int]:
    """Yield rows `first`, `first + step` … after the header, as dicts; return how many rows."""
    cursor = Cursor(skip=first, step=step)
    yield from read_csv_at(stream, where, reopen, cursor)
    return cursor.records


def read_csv_at(
    stream: BinaryIO, where: str, reopen: Reopen, cursor: Cursor
) -> Iterator[dict[str, str]]:
    """Yield the rows `cursor` keeps, from its offset on, moving it past each one.

    The header is read first wherever the cursor stands: it names every row's fields.
    """
    at = 0  # bytes handed to the csv reader: its rows never read ahead of what they need
    begun = 0  # where the reader began; the lines above it are counted only for an error

    def counted(text: TextIO, first: bool = False) -> Iterator[str]:
        nonlocal at
        read, limit = lines(text), LINE_LIMIT
        if first:  # the file's first line: a byte-order mark is counted, and dropped
            for line in read:
                if cut(line, "\r\n"):
                    raise too_long(where, at, 1)
                at += len(line.encode())
                yield line.removeprefix(_BOM)
                break
        for line in read:
            if len(line) >= limit and cut(line, "\r\n"):
                raise too_long(where, at, _lines_before(reopen, at) + 1)
            at += len(line) if line.isascii() else len(line.encode())
            yield line

    if csv.field_size_limit() < FIELD_LIMIT:
        csv.field_size_limit(FIELD_LIMIT)
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
    reader = csv.reader(counted(text, first=True), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            return
        _check_names(header, where)
        if cursor.offset > at:
            begun = cursor.offset
            text.detach()
            stream.seek(cursor.offset)
            at = cursor.offset
            text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
            reader = csv.reader(counted(text), strict=True)
        width = len(header)
        records, skip, step, count = cursor.records, cursor.skip, cursor.step, cursor.count
        start = at
        for row in reader:
            if not row:  # a blank line is no row
                start = at
                continue
            records += 1
            if skip:
                skip -= 1
                start = at
                continue
            skip = step - 1
            if len(row) != width:
                # Quoted fields may span lines: the row starts that many lines up.
                number = reader.line_num - sum(f.count("\n") for f in row)
                number += _lines_before(reopen, begun)
                problem = f"the row on line {number} has {len(row)} fields, the header {width}"
                raise damaged(where, start, problem)
            count += 1
            cursor.offset, cursor.records, cursor.skip, cursor.count = at, records, skip, count
            yield dict(zip(header, row, strict=True))
            start = at
        cursor.offset, cursor.records, cursor.skip, cursor.count = at, records, skip, count
    except csv.Error as e:
        number = _lines_before(reopen, begun) + reader.line_num
        offset = line_offset(reopen, number)
        if str(e).startswith("field larger than field limit"):
            limit = csv.field_size_limit()
            raise StorageError(
                f"line {number} has a field longer than {limit} characters, at byte offset "
                f"{offset}",
                source=where,
                hint="a quote that is never closed makes the rest of the file one field; if "
                "the field is real, raise csv.field_size_limit() before reading, or keep long "
                "values in JSON Lines or TFRecord files",
            ) from None
        raise damaged(where, offset, f"line {number} is not CSV: {e}") from None
    except UnicodeDecodeError:
        number, offset = first_bad_utf8(reopen)
        raise damaged(where, offset, f"line {number} is not UTF-8") from None


def _check_names(header: list[str], where: str) -> None:
    """Refuse a header that names a column twice: its dicts would keep one of the two."""
    columns: dict[str, list[int]] = {}
    for number, name in enumerate(header, 1):
        columns.setdefault(name, []).append(number)
    for name, numbers in columns.items():
        if len(numbers) > 1:
            listed = ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"
            raise StorageError(
                f"the header names column {name!r} more than once: columns {listed}",
                source=where,
                hint="rename all but one: each row becomes a dict keyed by the header's names, "
                "where one column would hide the other",
            )


def _lines_before(reopen: Reopen, offset: int) -> int:
    """How many lines, as the csv reader splits them, lie above `offset`."""
    if not offset:
        return 0
    count = at = 0
    with reopen() as stream:
        for line in lines(io.TextIOWrapper(stream, encoding="utf-8", newline="")):
            if at >= offset:
                break
            at += len(line) if line.isascii() else len(line.encode())
            count += 1
    return count
