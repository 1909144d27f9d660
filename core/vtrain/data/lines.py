"""Lines read with a bound: a file without line ends must not become one string in memory.

`for line in text` reads a line however long it is, so a CSV or JSON Lines file
that lost its line ends (or is not text at all) would be read whole. Readers
take lines through `lines()` instead; a line that reaches `LINE_LIMIT`
characters without its end is refused by `too_long`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TextIO

from vtrain.errors import StorageError

LINE_LIMIT = 1 << 25
"""The longest line read, in characters (32 Mi): two CSV fields of the csv limit, or a JSON
record of 32 MB. Past it, a line is refused, whatever the format."""


def lines(text: TextIO) -> Iterator[str]:
    """The lines of `text`, each cut at `LINE_LIMIT` characters (see `cut`)."""
    return iter(partial(text.readline, LINE_LIMIT), "")


def cut(line: str, ends: str = "\n") -> bool:
    """True when `line` was cut at the bound: as long as it, and not ending in one of `ends`
    (the characters that end a line in its format)."""
    return len(line) >= LINE_LIMIT and line[-1] not in ends


def too_long(where: str, offset: int, number: int) -> StorageError:
    """The error for line `number`, at byte `offset`, that has no end within the bound."""
    return StorageError(
        f"line {number} is longer than {LINE_LIMIT} characters, at byte offset {offset}",
        source=where,
        hint="a file that lost its line ends, or one that is not text; keep records that long "
        "in TFRecord files",
    )
