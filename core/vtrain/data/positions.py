"""Where in a file a bad record starts, and the error that says so.

The readers count lines, not bytes, so the hot loop stays as fast as a plain
`for line in f`; only when a record is bad is the file read again to turn its
line number into a byte offset.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from vtrain.errors import StorageError

Reopen = Callable[[], BinaryIO]
"""Opens the file again from its start, in binary."""


def damaged(where: str, offset: int, problem: str, hint: str | None = None) -> StorageError:
    """The error for a torn or corrupt record: the file, the byte offset, what is wrong."""
    return StorageError(
        f"{problem} at byte offset {offset}",
        source=where,
        hint=hint or "the file is damaged or was not fully written; export or copy it again",
    )


def line_offset(reopen: Reopen, number: int) -> int:
    """The byte offset where line `number` (1-based, '\\n'-separated) starts."""
    offset = 0
    with reopen() as stream:
        for _ in range(number - 1):
            line = stream.readline()
            if not line:
                break
            offset += len(line)
    return offset


def first_bad_utf8(reopen: Reopen) -> tuple[int, int]:
    """(line number, byte offset) of the first line that is not UTF-8."""
    offset = 0
    with reopen() as stream:
        for number, line in enumerate(stream, 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as e:
                return number, offset + e.start
            offset += len(line)
    return 0, offset
