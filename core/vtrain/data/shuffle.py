"""Seeded shuffling: each epoch's file order, and the order a block of records is given out in.

Every order is Python's `random.shuffle` under a seed made from the stream's
seed and where the order is used (epoch, deal, reader, block), so every
replica computes the same orders, and a resumed stream the orders it would
have had. A block's seed is written into the position, so reading it back
needs no derivation.
"""

from __future__ import annotations

import hashlib
import random

from vtrain.frozen import Frozen

DEFAULT_BUFFER = 1024
"""Records a shuffling stream reads ahead and gives out in a seeded order."""
_SEED_BITS = 52  # below 2**53: a seed stays exact in every JSON reader


class Shuffle(Frozen):
    """A stream's shuffling: the seed, and how many records a block holds."""

    __slots__ = ("seed", "buffer")
    seed: int
    buffer: int

    def __init__(self, seed: int, buffer: int) -> None:
        self._init_from(locals())

    def to_json(self) -> dict[str, int]:
        """The shuffling as a position records it."""
        return {"seed": self.seed, "buffer": self.buffer}

    def block_seed(self, epoch: int, deal: int, rank: int, block: int) -> int:
        """The seed of reader `rank`'s `block`-th block in deal `deal` of `epoch`."""
        return derive(self.seed, "block", epoch, deal, rank, block)


def derive(*parts: object) -> int:
    """A seed from `parts`, the same in every process and every Python version."""
    text = "/".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> (64 - _SEED_BITS)


def file_order(files: int, shuffle: Shuffle | None, epoch: int) -> list[int]:
    """The order `files` listed files are read in during `epoch`: sorted, or seeded per epoch."""
    order = list(range(files))
    if shuffle is not None:
        random.Random(derive(shuffle.seed, "files", epoch)).shuffle(order)
    return order


def block_order(seed: int | None, count: int) -> list[int]:
    """The order a block of `count` records is given out in: seeded, or as read (None)."""
    order = list(range(count))
    if seed is not None:
        random.Random(seed).shuffle(order)
    return order
