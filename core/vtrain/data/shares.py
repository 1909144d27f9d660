"""`Share`: the files one replica reads, and which of their records are its own.

Files are dealt round-robin over the sorted list: reader r of n gets files r,
r+n, r+2n … (the order tf.data's file-level auto-sharding uses). Every file goes
to exactly one reader, shares differ by at most one file, and every replica
computes the same deal from the same names, whatever order they were listed in.
With record-level sharding every reader gets every file and keeps record i of
the share's stream when ``i % n == k``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

from vtrain.errors import UsageError
from vtrain.frozen import Frozen

T = TypeVar("T")


def check_place(rank: object, world_size: object) -> tuple[int, int]:
    """(rank, world_size) when both are ints with 0 <= rank < world_size; else a UsageError."""
    for name, value in (("world_size", world_size), ("rank", rank)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise UsageError("not an integer", source=name, value=value, expected="an int")
    assert isinstance(rank, int) and isinstance(world_size, int)
    if world_size < 1:
        raise UsageError("no readers", source="world_size", value=world_size, expected="1 or more")
    if not 0 <= rank < world_size:
        raise UsageError(
            "out of range",
            source="rank",
            value=rank,
            expected=f"0 to {world_size - 1} (world_size is {world_size})",
        )
    return rank, world_size


def deal(names: Sequence[T], rank: int, world_size: int) -> tuple[T, ...]:
    """Reader `rank`'s items of `names` (already sorted): every `world_size`-th from `rank`.

    The one round-robin deal: files among readers, and every plugin handle's `shard`.
    """
    return tuple(names[rank::world_size])


class Share(Frozen):
    """This replica's part of one split: its files, and its record stride within them.

    Iterating a share gives its files. `record_shard` is (k, n): keep record i
    of the stream over `files` (in order) when ``i % n == k``; (0, 1) keeps all.
    """

    __slots__ = (
        "split",
        "uri",
        "format",
        "files",
        "rank",
        "world_size",
        "record_shard",
        "total_files",
    )
    split: str
    uri: str | None
    """The pattern the files came from; None when this replica reads nothing."""
    format: str | None
    """AIP_DATA_FORMAT, when set: the records' format for every file of the split."""
    files: tuple[str, ...]
    """Local paths, /gcs/ paths or gs:// URIs, in the order they are read."""
    rank: int | None
    """This replica's place among the readers; None when it reads nothing."""
    world_size: int
    """How many replicas share the split (1 for an evaluator's validation split)."""
    record_shard: tuple[int, int]
    total_files: int | None
    """How many files the split has in all; None where it was not listed (reads nothing)."""

    def __init__(
        self,
        *,
        split: str,
        uri: str | None,
        files: Sequence[str],
        rank: int | None,
        world_size: int,
        record_shard: tuple[int, int] = (0, 1),
        total_files: int | None = None,
        format: str | None = None,
    ) -> None:
        files = tuple(files)
        record_shard = (int(record_shard[0]), int(record_shard[1]))
        self._init_from(locals())

    @classmethod
    def empty(cls, split: str, world_size: int = 1) -> Share:
        """The share of `split` of a replica that reads nothing (a ps, an MXNet scheduler),
        among `world_size` readers."""
        return cls(split=split, uri=None, files=(), rank=None, world_size=world_size)

    @property
    def by_record(self) -> bool:
        """True when readers share records of the same files rather than whole files."""
        return self.record_shard[1] > 1

    def part(self, index: int, parts: int) -> Share:
        """Part `index` of `parts` of this share, for the workers of one replica's loader.

        Whole files when there are enough of them (and the share is by file),
        else every file with the record stride narrowed, so the parts stay
        disjoint and together hold the whole share.
        """
        index, parts = check_place(index, parts)
        if parts == 1:
            return self
        if not self.by_record and len(self.files) >= parts:
            return self.replace(files=deal(self.files, index, parts))
        k, n = self.record_shard
        return self.replace(record_shard=(k + n * index, n * parts))

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)
