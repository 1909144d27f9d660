"""What a global position must prove before a resume: that it is whole, as its stream left it.

`check_position` (stream_position.py) checks each field's type and range. A
position can be well typed and still damaged: a replica copied over another,
an item added to a work list, a cursor moved. Dealt out again, it would
repeat or skip records without a word. So the fields are checked together:

- `listing` is the digest of `source`;
- in the first deal of an epoch, each replica's work is what that deal gives its
  rank (so the replicas' work holds each file of the listing exactly once);
  in a later deal by record, every item's step is a multiple of the deal's
  world size;
- a replica's `current` is item `done` of its work, read forward: the same
  files or the last of them, the same step, its stride in phase with the
  records of the files it passed, which, like every file of the items done,
  have their record counts (`counts` learns each file as it ends), and its
  `read` is the records its work has passed and keeps (no more, in JSON Lines,
  whose blank lines are passed and not given out);
- a shuffle block is the replica's own latest, of no more records than the
  buffer; without shuffling there are no blocks;
- last, the seal: a digest over the whole position, made by `merge_states`.

Each failure is one ConfigError naming the field. The seal catches what the
rest cannot see (a cursor moved to another record's start, a count changed);
the other checks name the field that broke.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from vtrain.data.deal import epoch_work
from vtrain.data.lanes import Lane, Leftover, Work
from vtrain.data.shuffle import Shuffle
from vtrain.data.stream_position import Position, Replica, damage, digest, item, shown

SEAL = "digest"
"""The key of the seal in a global position."""


def seal(position: Mapping[str, Any]) -> str:
    """The digest over a global position: all of it but the seal, and but `source`, which
    `listing` digests (a listing of many files would cost more at every save)."""
    body = {key: value for key, value in position.items() if key not in (SEAL, "source")}
    text = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(text).hexdigest()[:32]


def prove_whole(
    position: Mapping[str, Any], checked: Position, *, files: int, shuffle: Shuffle | None
) -> None:
    """Refuse a checked `position` whose fields do not agree (see the module docstring)."""
    listing = position.get("listing")
    if listing != digest(position["source"]):
        raise damage("listing", listing, "the digest of its source (a listing changed by hand)")
    world_size = len(checked.replicas)
    for rank, replica in enumerate(checked.replicas):
        path = f"replicas[{rank}]"
        if checked.deal == 0:
            dealt = _plain(
                epoch_work(files, checked.epoch, shuffle, rank, world_size, checked.by_record)
            )
            if _plain(replica.work) != dealt:
                raise damage(
                    f"{path}.work",
                    shown(_plain(replica.work)),
                    f"{shown(dealt)}, what the first deal of epoch {checked.epoch} gives rank "
                    f"{rank} of {world_size}",
                )
        elif checked.by_record:
            for i, w in enumerate(replica.work):
                step = item(w).step
                if step % world_size:
                    raise damage(
                        f"{path}.work[{i}].step",
                        step,
                        f"a multiple of {world_size}, the world size of its deal",
                    )
        _check_items(replica, path, checked.counts, shuffle, exact=_gapless(position))
        if replica.block is not None:
            _check_block(replica, path, shuffle, checked.epoch, checked.deal, rank)
    if SEAL not in position:
        # Saved by a vtrain before the seal: what its fields say together is all it can prove.
        return
    stored = position[SEAL]
    try:
        ours = seal(position)
    except (TypeError, ValueError):  # not JSON: no position merge_states() made
        ours = None
    if stored != ours:
        raise damage(
            SEAL,
            stored,
            "the digest of the position as merge_states() made it (it was changed since)",
        )


def _check_items(
    replica: Replica,
    path: str,
    counts: Mapping[str, int],
    shuffle: Shuffle | None,
    *,
    exact: bool,
) -> None:
    """The items done are read to their end, `current` is item `done` read forward, and the
    records given out are those the work has passed and keeps (`exact`), or no more."""
    passed = 0  # records the work has passed that it keeps: at least those given out
    for i, value in enumerate(replica.work):
        w = item(value)
        if isinstance(w, Leftover):
            _check_leftover(w, f"{path}.work[{i}]", shuffle)
            passed += w.left() if i < replica.done else 0
        elif i < replica.done:
            if (f := _uncounted(w.files, counts)) is not None:
                raise damage(
                    f"{path}.done",
                    replica.done,
                    f"at most {i}: file {f} of item {i} has no record count, so it was not "
                    "read to its end",
                )
            passed += _kept(sum(counts[str(f)] for f in w.files) - w.records, w.skip, w.step)
    if replica.current is not None:
        passed += _check_current(replica, path, counts)
    block = replica.block
    due = 0 if block is None else max(block.count - block.start, 0)  # drawn, not given yet
    if replica.read + due > passed or (exact and replica.read + due != passed):
        bound = "" if exact else "at most "
        raise damage(
            f"{path}.read",
            replica.read,
            f"{bound}{passed - due}, the records its work has passed and keeps"
            + (f", less the {due} of its block still due" if due else ""),
        )


def _gapless(position: Mapping[str, Any]) -> bool:
    """True when every record a lane keeps is given out: in every format but JSON Lines, whose
    blank lines count as records (a cursor counts lines) and are passed over."""
    source = position["source"]
    return source.get("format") in ("csv", "tf-record", "bigquery")


def _check_current(replica: Replica, path: str, counts: Mapping[str, int]) -> int:
    """Check that `current` is item `done` read forward; return how many records it kept."""
    current = replica.current
    assert current is not None
    where = f"{path}.current"
    origin = item(replica.work[replica.done])
    if isinstance(origin, Leftover):
        return _check_given(current, origin, where)
    if not isinstance(current, Lane):
        raise damage(where, shown(current.to_json()), f"a lane: item {replica.done} of its work")
    if current.step != origin.step:
        raise damage(f"{where}.step", current.step, f"{origin.step}, the step of its item")
    kept = len(current.files)
    if kept > len(origin.files) or current.files != origin.files[len(origin.files) - kept :]:
        raise damage(
            f"{where}.files",
            list(current.files),
            f"{list(origin.files)}, the files of item {replica.done}, or the last of them",
        )
    if current.skip >= current.step:
        raise damage(f"{where}.skip", current.skip, f"0 to {current.step - 1}, below its step")
    passed = origin.files[: len(origin.files) - kept]
    if passed:
        if (f := _uncounted(passed, counts)) is not None:
            raise damage(
                f"{where}.files",
                list(current.files),
                f"the files of its item from one read to its end (file {f} has no record count)",
            )
        gone = sum(counts[str(f)] for f in passed) - origin.records + current.records
    else:
        if current.offset < origin.offset or current.records < origin.records:
            raise damage(
                f"{where}.offset",
                current.offset,
                f"{origin.offset} or more, where its item starts in the file",
            )
        gone = current.records - origin.records
    # The lane keeps record `origin.skip`, then every `step`-th, of those from its item's start:
    # the next it keeps is `gone + skip` records on.
    due = gone + current.skip - origin.skip
    if due < 0 or due % current.step:
        raise damage(
            f"{where}.skip",
            current.skip,
            f"the skip that keeps its stride: records {origin.skip} + {current.step}k of its "
            f"item, {gone} of them passed",
        )
    return _kept(gone, origin.skip, origin.step)


def _kept(passed: int, skip: int, step: int) -> int:
    """Of `passed` records, how many a lane that keeps `skip`, `skip + step` … has kept."""
    return max(0, -(-(passed - skip) // step))


def _check_given(current: Work, origin: Leftover, where: str) -> int:
    """A leftover being given out is the one dealt, moved on by whole steps; return how many
    records it gave."""
    if not isinstance(current, Leftover) or (
        _plain(current.lanes),
        current.count,
        current.order,
        current.step,
    ) != (_plain(origin.lanes), origin.count, origin.order, origin.step):
        raise damage(where, shown(current.to_json()), "the leftover of its item, as dealt")
    moved = current.start - origin.start
    if moved < 0 or moved % current.step or current.start >= current.count + current.step:
        raise damage(
            f"{where}.start",
            current.start,
            f"{origin.start} + {current.step}k, up to {current.count + current.step - 1}",
        )
    return moved // current.step


def _check_leftover(leftover: Leftover, path: str, shuffle: Shuffle | None) -> None:
    """A block still due: only shuffling reads blocks, of `buffer` records at most."""
    if shuffle is None:
        raise damage(path, shown(leftover.to_json()), "a lane: there is no shuffling")
    if leftover.count > shuffle.buffer:
        raise damage(f"{path}.count", leftover.count, f"at most {shuffle.buffer}, the buffer")


def _check_block(
    replica: Replica, path: str, shuffle: Shuffle | None, epoch: int, deal: int, rank: int
) -> None:
    """The block being given out is the replica's own latest: its seed, its records."""
    block = replica.block
    assert block is not None
    where = f"{path}.block"
    _check_leftover(block, where, shuffle)
    assert shuffle is not None
    if replica.blocks < 1:
        raise damage(f"{path}.blocks", replica.blocks, "1 or more: it is giving out a block")
    if block.order != shuffle.block_seed(epoch, deal, rank, replica.blocks - 1):
        raise damage(f"{where}.order", block.order, f"the seed of block {replica.blocks - 1}")
    if block.step != 1 or block.start > block.count:
        raise damage(
            f"{where}.start",
            block.start,
            f"0 to {block.count}, one record after another (step 1)",
        )


def _uncounted(files: tuple[int, ...], counts: Mapping[str, int]) -> int | None:
    """The first of `files` with no record count; None when all have one."""
    return next((f for f in files if str(f) not in counts), None)


def _plain(value: Any) -> Any:
    """`value` as JSON reads it back: tuples as lists, so a dealt value and a saved one compare."""
    return json.loads(json.dumps(value))
