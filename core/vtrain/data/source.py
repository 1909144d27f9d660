"""`Source`: what a stream reads its lanes from: a split's files, or a table's read streams."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from vtrain.data.lanes import Lane

Learn = Callable[[int, int], None]
"""Told (file index, records in the file) whenever a lane has read a file to its end."""


class Source(Protocol):
    """Where a plan's lanes are read: a split's files, or a BigQuery table's streams."""

    @property
    def identity(self) -> Mapping[str, Any]:
        """What a position records of the source; `files` lists [name, size, generation]."""
        ...

    @property
    def sizes(self) -> Sequence[int] | None:
        """Each file's size, where files have one."""
        ...

    @property
    def names(self) -> Sequence[str]:
        """Each file's name (or stream's), by index."""
        ...

    @property
    def count(self) -> int:
        """How many files (or streams) there are."""
        ...

    def check(self, recorded: Mapping[str, Any], where: str) -> None:
        """Refuse a position's record of a source unless it is this one, unchanged."""
        ...

    def read(self, lane: Lane, learn: Learn) -> Iterator[Any]:
        """Yield the records `lane` keeps, moving it along; `learn` hears of each file read."""
        ...

    def for_epoch(self, world_size: int) -> Source:
        """The source to read the next epoch from."""
        ...
