"""This trainer's block of rows: contiguous, in rank order. Pure; no XGBoost.

XGBoost trains on rows split across workers and merges their statistics; what
the workers hold together must be the whole data set, each row once. A block
keeps neighbouring rows together (the first `total % world` blocks one row
longer), in rank order, so the same rank always reads the same rows. The
handle's `shard` is the other split, round-robin, as on every handle.
"""

from __future__ import annotations

from vtrain import UsageError


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
