"""`Plan`: one reader's part of an epoch, how far it is, and the records it gives out.

Without shuffling, lanes are read straight through. With it, records are read
`buffer` at a time into a block that is given out in a seeded order; the
block is described by where its lanes stood when it was read, so a position
holds a block as a few numbers and a resume reads it back, however far into
the files it lies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

from vtrain.data.lanes import Lane, Leftover
from vtrain.data.shuffle import block_order
from vtrain.data.source import Learn, Source
from vtrain.data.stream_position import Replica, item, lane
from vtrain.errors import ConfigError


class Plan:
    """One reader's work in an epoch, and the generator of its records."""

    def __init__(
        self,
        source: Source,
        replica: Replica,
        *,
        learn: Learn,
        buffer: int = 0,
        seeds: Callable[[int], int] | None = None,
    ) -> None:
        self.source, self.replica, self.learn = source, replica, learn
        self.buffer, self.seeds = buffer, seeds
        self._block_records: list[Any] | None = None
        """The records of the block being given out, when this plan read it."""
        self._reading: Iterator[Any] | None = None
        """The current lane's reader, kept between blocks: a block ends mid-file."""

    def to_json(self) -> dict[str, Any]:
        """The replica's part of a position: what it has given out and what it has left."""
        r = self.replica
        current = r.current
        # Unshuffled, a lane gives its records straight out: they count as read at once.
        live = current.count if self.seeds is None and isinstance(current, Lane) else 0
        return {
            "read": r.read + live,
            "blocks": r.blocks,
            "block": None if r.block is None else r.block.to_json(),
            "work": r.work,
            "done": r.done,
            "current": None if current is None else current.to_json(),
        }

    def records(self) -> Iterator[Any]:
        """Yield the reader's records to the end of its part of the epoch."""
        r = self.replica
        if r.block is not None:
            yield from self._give(r.block, self._block_records)
            r.block = None
        while r.current is not None:
            current = r.current
            if isinstance(current, Leftover):
                yield from self._give(current, None)
                self._advance()
            elif self.seeds is None:
                yield from self.source.read(current, self.learn)
                r.read += current.count
                self._advance()
            else:
                self._draw()
                assert r.block is not None
                yield from self._give(r.block, self._block_records)
                r.block = None

    def _advance(self) -> None:
        r = self.replica
        r.done += 1
        r.current = item(r.work[r.done]) if r.done < len(r.work) else None

    def _draw(self) -> None:
        """Read the next block from the lanes ahead; the block records where they stood."""
        r = self.replica
        lanes: list[Any] = []
        records: list[Any] = []
        while len(records) < self.buffer and isinstance(r.current, Lane):
            current = r.current
            lanes.append(current.to_json())
            if self._reading is None:
                self._reading = self.source.read(current, self.learn)
            want = self.buffer - len(records)
            records += islice(self._reading, want)
            if len(records) < self.buffer:  # the lane ran out
                self._reading = None
                self._advance()
        assert self.seeds is not None
        r.block = Leftover(tuple(lanes), len(records), self.seeds(r.blocks))
        r.blocks += 1
        self._block_records = records

    def _give(self, block: Leftover, records: list[Any] | None) -> Iterator[Any]:
        """Give out the records of `block` still due, in its order."""
        if block.start >= block.count:
            return
        if records is None:
            records = gather(self.source, block)
        order = block_order(block.order, block.count)
        r = self.replica
        while block.start < block.count:
            at = order[block.start]
            block.start += block.step
            r.read += 1
            yield records[at]
        self._block_records = None


def gather(source: Source, block: Leftover) -> list[Any]:
    """The records of a block, read again from where its lanes stood."""
    records: list[Any] = []
    for value in block.lanes:
        records += islice(source.read(lane(value), _ignore), block.count - len(records))
        if len(records) == block.count:
            return records
    raise ConfigError(
        f"a shuffle block of {block.count} records finds only {len(records)} where it was read",
        source="resume",
        path="block",
        expected="the records the position was taken on",
        hint="the files changed since, or the position is damaged: start the epoch over "
        "(resume=None)",
    )


def _ignore(index: int, records: int) -> None:
    """A block read again teaches nothing new about its files."""
