"""This trainer's share of the data: a block of rows, or every n-th file. Pure; no XGBoost.

XGBoost trains on rows split across workers and merges their statistics; what
the workers hold together must be the whole data set, each row once. Rows go
in contiguous blocks (the first `total % world` blocks one row longer), files
round-robin, both in rank order, so the same rank always reads the same share.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from vtrain import UsageError

T = TypeVar("T")


def row_block(total: int, rank: int, world_size: int) -> slice:
    """Rows ``[start, stop)`` of rank `rank` among `world_size` when `total` rows are split."""
    if isinstance(total, bool) or not isinstance(total, int) or total < world_size:
        raise UsageError(
            f"cannot give each of {world_size} trainer(s) at least one row",
            source="rows",
            value=total,
            expected=f"an int >= {world_size} (the number of trainers)",
        )
    base, extra = divmod(total, world_size)
    start = rank * base + min(rank, extra)
    return slice(start, start + base + (1 if rank < extra else 0))


def file_share(files: Sequence[T], rank: int, world_size: int) -> list[T]:
    """Every `world_size`-th item of `files`, starting at `rank`."""
    if isinstance(files, str | bytes):
        raise UsageError(
            "one string, not a list of files",
            source="files",
            value=files,
            expected="a list of paths (glob them first)",
        )
    items = list(files)
    if len(items) < world_size:
        raise UsageError(
            f"{len(items)} file(s) for {world_size} trainers: some would train on nothing",
            source="files",
            value=items,
            expected=f"at least {world_size} files, or shard rows instead",
        )
    return items[rank::world_size]
