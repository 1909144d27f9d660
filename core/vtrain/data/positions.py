"""Where in a file a bad record starts, and the error that says so.

The readers count lines, not bytes, so the hot loop stays as fast as a plain
`for line in f`; only when a record is bad is the file read again to turn its
line number into a byte offset.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from typing import BinaryIO

from vtrain.errors import StorageError

_BLOCK = 1 << 20

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
    # Counted in blocks, never by line: the file may be damaged where it has no line ends.
    offset, need = 0, number - 1
    with reopen() as stream:
        while need and (block := stream.read(_BLOCK)):
            found = block.count(b"\n")
            if found >= need:
                at = -1
                for _ in range(need):
                    at = block.index(b"\n", at + 1)
                return offset + at + 1
            need -= found
            offset += len(block)
    return offset


def first_bad_utf8(reopen: Reopen) -> tuple[int, int]:
    """(line number, byte offset) of the first line that is not UTF-8."""
    # Decoded in blocks, never by line (see line_offset); a character cut by a block's end is
    # held back by the decoder and joined to the next block.
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, number = 0, 1
    with reopen() as stream:
        while block := stream.read(_BLOCK):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as e:
                held = len(e.object) - len(block)  # the bytes of the block before
                at = max(e.start - held, 0)
                return number + block.count(b"\n", 0, at), offset + e.start - held
            number += block.count(b"\n")
            offset += len(block)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as e:  # the file ends inside a character
            return number, offset - len(e.object) + e.start
    return 0, offset
