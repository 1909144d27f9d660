"""CSV with a header row: each later row becomes a dict keyed by the header's names."""

from __future__ import annotations

import csv
import io
from collections.abc import Generator
from itertools import count, islice
from typing import BinaryIO

from vtrain.data.positions import Reopen, damaged, first_bad_utf8, line_offset


def read_csv(
    stream: BinaryIO, where: str, reopen: Reopen, first: int = 0, step: int = 1
) -> Generator[dict[str, str], None, int]:
    """Yield rows `first`, `first + step` … after the header, as dicts; return how many rows."""
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
    reader = csv.reader(text, strict=True)
    numbers = count()
    try:
        header = next(reader, None)
        if header is None:
            return 0
        width = len(header)
        rows = zip(numbers, (r for r in reader if r), strict=False)  # a blank line is no row
        for _, row in rows if step == 1 else islice(rows, first, None, step):
            if len(row) != width:
                # Quoted fields may span lines: the row starts that many lines up.
                number = reader.line_num - sum(field.count("\n") for field in row)
                problem = f"the row on line {number} has {len(row)} fields, the header {width}"
                raise damaged(where, line_offset(reopen, number), problem)
            yield dict(zip(header, row, strict=True))
    except csv.Error as e:
        number = reader.line_num
        raise damaged(
            where, line_offset(reopen, number), f"line {number} is not CSV: {e}"
        ) from None
    except UnicodeDecodeError:
        number, offset = first_bad_utf8(reopen)
        raise damaged(where, offset, f"line {number} is not UTF-8") from None
    # zip() drew one number more than there were rows.
    return next(numbers) - 1
