"""`Lane` and `Leftover`: the two kinds of work a stream deals out, each a small JSON value.

A lane reads some files in order from a byte offset and keeps every `step`-th
record after passing `skip`: one whole file when readers share a split by file,
every file when they share it by record. A leftover is what a shuffle block has
still to give out: the `count` records its lanes held when it was read, put in
a seeded order, of which positions `start`, `start + step` … are still due.

Either splits into parts that are disjoint and together hold all of it (a
stride over its records): that is how what is left of an epoch is dealt to
another number of readers, record for record.
"""

from __future__ import annotations

from typing import Any

from vtrain.data.cursor import Cursor

LaneJson = int | dict[str, Any]
"""A lane as a position holds it: a file's index alone stands for the whole of that file."""


class Lane(Cursor):
    """Files read one after the other, as one run of records; the cursor is in the first."""

    __slots__ = ("files",)

    def __init__(
        self,
        files: tuple[int, ...],
        offset: int = 0,
        records: int = 0,
        skip: int = 0,
        step: int = 1,
    ) -> None:
        super().__init__(offset, records, skip, step)
        self.files = files
        """Indices into the source's files, in the order read; the first is being read."""

    def next_file(self) -> None:
        """Move to the start of the next file; the stride carries on across the boundary."""
        self.files = self.files[1:]
        self.offset = self.records = 0

    def to_json(self) -> LaneJson:
        """The lane as a position holds it."""
        whole = self.step == 1 and not (self.offset or self.records or self.skip)
        if whole and len(self.files) == 1:
            return self.files[0]
        return {
            "files": self.files,
            "offset": self.offset,
            "records": self.records,
            "skip": self.skip,
            "step": self.step,
        }

    def split(self, parts: int) -> list[Lane]:
        """`parts` lanes that between them keep each record this one keeps, once."""
        return [
            Lane(
                self.files, self.offset, self.records, self.skip + self.step * k, self.step * parts
            )
            for k in range(parts)
        ]


class Leftover:
    """What a block of records read ahead for shuffling has still to give out."""

    __slots__ = ("lanes", "count", "order", "start", "step")

    def __init__(
        self,
        lanes: tuple[LaneJson, ...],
        count: int,
        order: int | None,
        start: int = 0,
        step: int = 1,
    ) -> None:
        self.lanes = lanes
        """The lanes as they stood when the block was read: reading `count` records from them
        again gives the block back."""
        self.count = count
        """Records in the block."""
        self.order = order
        """The seed of the order the block is given out in; None: as read."""
        self.start = start
        """The position, in that order, of the next record due."""
        self.step = step
        """Every `step`-th position from `start` is due."""

    def left(self) -> int:
        """How many records are still due."""
        return max(0, -(-(self.count - self.start) // self.step))

    def to_json(self) -> dict[str, Any]:
        """The leftover as a position holds it."""
        return {
            "lanes": self.lanes,
            "count": self.count,
            "order": self.order,
            "start": self.start,
            "step": self.step,
        }

    def split(self, parts: int) -> list[Leftover]:
        """`parts` leftovers that between them give out each record still due, once."""
        return [
            Leftover(
                self.lanes, self.count, self.order, self.start + self.step * k, self.step * parts
            )
            for k in range(parts)
        ]


Work = Lane | Leftover
"""One item of a reader's work."""
