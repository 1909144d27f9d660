"""JSON Lines: one JSON value per line (an object in Vertex's exports); blank lines are skipped."""

from __future__ import annotations

import io
import json
from collections.abc import Generator
from itertools import count, islice
from typing import Any, BinaryIO

from vtrain.data.positions import Reopen, damaged, first_bad_utf8, line_offset


def read_jsonl(
    stream: BinaryIO, where: str, reopen: Reopen, first: int = 0, step: int = 1
) -> Generator[Any, None, int]:
    """Yield records `first`, `first + step` … of the file; return how many lines it has."""
    # Text mode decodes in large chunks, as `for line in open(path)` does; '\n' only, as
    # JSON Lines says, so that line numbers match the bytes when an offset is needed.
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
    loads = json.loads
    numbers = count(1)
    lines = (
        zip(numbers, text, strict=False)
        if step == 1
        else islice(zip(numbers, text, strict=False), first, None, step)
    )
    try:
        for number, line in lines:
            try:
                record = loads(line)
            except ValueError as e:
                if line.isspace():
                    continue
                offset = line_offset(reopen, number)
                torn = "" if line.endswith("\n") else " (the file ends inside it)"
                raise damaged(where, offset, f"line {number} is not JSON{torn}: {e}") from None
            yield record
    except UnicodeDecodeError:
        number, offset = first_bad_utf8(reopen)
        raise damaged(where, offset, f"line {number} is not UTF-8") from None
    # zip() drew one number more than there were lines, unless the file was empty.
    return max(next(numbers) - 2, 0)
