"""Who reads what: a fresh epoch's deal, and the deal of what is left of one.

A fresh epoch orders the files (seeded per epoch when shuffling) and deals them
as `files()` does: round-robin by file, or every file to every reader with a
record stride (`by_record`). What is left of an epoch after a position is a
list of leftovers (shuffle blocks not yet given out) and lanes (files not yet
read to their end); another number of readers gets them round-robin while
there are enough lanes to go round, else each reader a stride of every one.
Either way each record still due goes to exactly one reader.
"""

from __future__ import annotations

from collections.abc import Sequence

from vtrain.data.lanes import Lane, LaneJson, Leftover, Work
from vtrain.data.shares import deal
from vtrain.data.shuffle import Shuffle, file_order


def epoch_work(
    files: int, epoch: int, shuffle: Shuffle | None, rank: int, world_size: int, by_record: bool
) -> tuple[LaneJson, ...]:
    """Reader `rank`'s lanes for the whole of `epoch`."""
    order = file_order(files, shuffle, epoch)
    if by_record:
        return (Lane(tuple(order), skip=rank, step=world_size).to_json(),)
    return deal(order, rank, world_size)


def rest_work(
    left: Sequence[Work],
    rank: int,
    world_size: int,
    by_record: bool,
    sizes: Sequence[int] | None,
) -> tuple[LaneJson, ...]:
    """Reader `rank`'s items of what is `left` of an epoch, leftovers first."""
    leftovers = [w for w in left if isinstance(w, Leftover) and not spent(w, sizes)]
    lanes = [w for w in left if isinstance(w, Lane) and not spent(w, sizes)]
    mine: list[Work]
    if not by_record and len(lanes) >= world_size:
        mine = [*deal(leftovers, rank, world_size), *deal(lanes, rank, world_size)]
    else:
        mine = [w.split(world_size)[rank] for w in leftovers]
        mine += [w.split(world_size)[rank] for w in lanes]
    return tuple(w.to_json() for w in mine if not (isinstance(w, Leftover) and not w.left()))


def spent(work: Work, sizes: Sequence[int] | None) -> bool:
    """True when `work` is known to hold no more records: a leftover with none due, a lane at
    the end of its last file."""
    if isinstance(work, Leftover):
        return not work.left()
    if not work.files:
        return True
    if sizes is None:
        return False
    return work.offset >= sizes[work.files[0]] and all(sizes[f] == 0 for f in work.files[1:])
