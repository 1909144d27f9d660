"""A stream's position as JSON, what it says, and its check before a resume.

`Stream.state()` is one replica's position, `merge_states` (merge.py) makes one
global position of every replica's, and `stream(resume=...)` checks a global
position against the split before it deals out what is left of the epoch::

    {"kind": "vtrain data position", "version": 1, "split": "training",
     "source": {"uri": PATTERN, "format": "jsonl" | "csv" | "tf-record" | "bigquery" | null,
                "root": FOLDER, "files": [[NAME_BELOW_ROOT, SIZE, GENERATION], ...]}
               (FOLDER is the pattern's, as it spells it: no replica's working folder;
               `vtrain.data.names`)
               (a table's: the read "session", its "schema" and "use_until", and its
               streams as "files"),
     "listing": DIGEST_OF_SOURCE,
     "shuffle": {"seed": SEED, "buffer": RECORDS} | null, "by_record": false,
     "epoch": E, "deal": D, "before": RECORDS_READ_IN_EARLIER_DEALS,
     "counts": {FILE: RECORDS_IN_IT, ...}, "world_size": W,
     "rank": R, "replica": REPLICA        <- a replica's state
     "replicas": [REPLICA, ...]           <- a global position, one per rank,
     "digest": SEAL                       <- a global position (position_proof.seal)}

    REPLICA  = {"read": N, "blocks": N, "block": LEFTOVER | null,
                "work": [ITEM, ...], "done": N, "current": ITEM | null}
    ITEM     = LANE | LEFTOVER
    LANE     = FILE | {"files": [FILE, ...], "offset": BYTES, "records": N, "skip": N, "step": N}
    LEFTOVER = {"lanes": [LANE, ...], "count": N, "order": SEED | null, "start": N, "step": N}

FILE is an index into source.files (a string as a key of `counts`, which holds
the files read to their end so far). A replica has done the items of `work`
before `done`; `current` is item `done` as far as it is read; `block` is the
shuffle block it is giving out. `deal` counts how often what was left of this
epoch was dealt to another number of readers. A resume checks the fields one by
one here, then together (position_proof.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vtrain.data.lanes import Lane, LaneJson, Leftover, Work
from vtrain.data.source import Source
from vtrain.errors import ConfigError
from vtrain.frozen import Frozen

KIND = "vtrain data position"
VERSION = 1


class Replica:
    """One reader's part of an epoch as a position holds it, checked."""

    __slots__ = ("read", "blocks", "block", "work", "done", "current")

    def __init__(
        self,
        work: tuple[Any, ...],
        *,
        done: int = 0,
        current: Work | None = None,
        read: int = 0,
        blocks: int = 0,
        block: Leftover | None = None,
    ) -> None:
        self.work = work
        """Its items as dealt (JSON values, never changed): lanes and leftovers."""
        self.done = done
        self.current = current if current is not None or done >= len(work) else item(work[done])
        """Item `done` as far as it is read; None when every item is done."""
        self.read = read
        """Records given out in this deal."""
        self.blocks = blocks
        """Shuffle blocks read in this deal: the next block's seed follows from it."""
        self.block = block
        """The shuffle block being given out."""

    def remaining(self) -> list[Work]:
        """What is left: the block's records still due, then the current and later items."""
        rest: list[Work] = [self.block] if self.block is not None else []
        if self.current is not None:
            rest.append(self.current)
        rest += [item(w) for w in self.work[self.done + 1 :]]
        return rest


class Position(Frozen):
    """A global position, checked against the stream that resumes from it."""

    __slots__ = ("epoch", "deal", "before", "counts", "replicas", "by_record")
    epoch: int
    deal: int
    before: int
    counts: Mapping[str, int]
    replicas: tuple[Replica, ...]
    by_record: bool
    """How its deal dealt the files: by record, or by file."""

    def __init__(
        self,
        epoch: int,
        deal: int,
        before: int,
        counts: Mapping[str, int],
        replicas: tuple[Replica, ...],
        by_record: bool,
    ) -> None:
        self._init_from(locals())

    @property
    def read(self) -> int:
        """Records given out in the epoch so far, by every replica in every deal."""
        return self.before + sum(r.read for r in self.replicas)


def digest(source: Mapping[str, Any]) -> str:
    """A short digest of a source's record in a position: equal sources, equal digests."""
    import hashlib
    import json

    text = json.dumps(source, sort_keys=True).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def item(value: Any) -> Work:
    """A lane or a leftover from a checked position's JSON."""
    if isinstance(value, Mapping) and "lanes" in value:
        return Leftover(
            tuple(value["lanes"]), value["count"], value["order"], value["start"], value["step"]
        )
    return lane(value)


def lane(value: LaneJson) -> Lane:
    """A lane from a checked position's JSON."""
    if isinstance(value, int):
        return Lane((value,))
    return Lane(
        tuple(value["files"]), value["offset"], value["records"], value["skip"], value["step"]
    )


def check_position(
    position: object,
    *,
    split: str,
    source: Source,
    shuffle: Mapping[str, int] | None,
) -> Position:
    """`position` checked against the stream: its split, files, format and shuffling."""
    where = "resume"
    check_kind(position, where)
    assert isinstance(position, Mapping)
    if "replicas" not in position:
        raise ConfigError(
            "a replica's state, not a global position",
            source=where,
            value=sorted(position),
            expected="vtrain.data.merge_states() of every replica's Stream.state()",
        )
    if position.get("split") != split:
        raise ConfigError(
            "a position of another split",
            source=where,
            path="split",
            value=position.get("split"),
            expected=f"{split!r}, the split this stream reads",
        )
    recorded = position.get("source")
    if not isinstance(recorded, Mapping):
        raise damage("source", recorded, "the source a Stream.state() records")
    source.check(recorded, where)
    if position.get("shuffle") != shuffle:
        raise ConfigError(
            "taken with other shuffling",
            source=where,
            path="shuffle",
            value=position.get("shuffle"),
            expected=f"{shuffle} (shuffle_seed= and buffer= of this stream)",
            hint="a position holds for one shuffling: pass the shuffle_seed and buffer it "
            "was taken with",
        )
    by_record = position.get("by_record")
    if not isinstance(by_record, bool):
        raise damage("by_record", by_record, "true or false")
    epoch, deal, before = (count_of(position.get(k), k) for k in ("epoch", "deal", "before"))
    world_size = count_of(position.get("world_size"), "world_size", 1)
    counts = position.get("counts")
    if not isinstance(counts, Mapping):
        raise damage("counts", shown(counts), "{file index: records} of the files read to the end")
    for f, c in counts.items():
        if not isinstance(f, str) or not f.isdigit() or int(f) >= source.count:
            raise damage("counts", f, f"a file's index, 0 to {source.count - 1}, as a string")
        count_of(c, f"counts.{f}")
    replicas = position.get("replicas")
    if not isinstance(replicas, (list, tuple)) or len(replicas) != world_size:
        raise damage("replicas", shown(replicas), f"a list of {world_size} replicas (world_size)")
    checker = _Checker(source.count, source.sizes)
    return Position(
        epoch,
        deal,
        before,
        dict(counts),
        tuple(checker.replica(r, f"replicas[{i}]") for i, r in enumerate(replicas)),
        by_record,
    )


class _Checker:
    """Checks the replicas of a position: every index in range, every count a count."""

    def __init__(self, files: int, sizes: Sequence[int] | None) -> None:
        self.files, self.sizes = files, sizes

    def replica(self, value: object, path: str) -> Replica:
        if not isinstance(value, Mapping):
            raise damage(
                path, shown(value), "a replica: {read, blocks, block, work, done, current}"
            )
        work = value.get("work")
        if not isinstance(work, (list, tuple)):
            raise damage(f"{path}.work", shown(work), "a list of lanes and leftovers")
        for i, w in enumerate(work):
            self.item(w, f"{path}.work[{i}]")
        done = count_of(value.get("done"), f"{path}.done")
        if done > len(work):
            raise damage(f"{path}.done", done, f"0 to {len(work)} (the items of its work)")
        current = value.get("current")
        if (current is None) != (done == len(work)):
            raise damage(f"{path}.current", shown(current), "an item while work is left, else null")
        block = value.get("block")
        return Replica(
            tuple(work),
            done=done,
            current=None if current is None else self.item(current, f"{path}.current"),
            read=count_of(value.get("read"), f"{path}.read"),
            blocks=count_of(value.get("blocks"), f"{path}.blocks"),
            block=None if block is None else self.leftover(block, f"{path}.block"),
        )

    def item(self, value: object, path: str) -> Work:
        if isinstance(value, Mapping) and "lanes" in value:
            return self.leftover(value, path)
        return self.lane(value, path)

    def lane(self, value: object, path: str) -> Lane:
        if is_int(value):
            assert isinstance(value, int)
            return Lane((self.file(value, path),))
        if not isinstance(value, Mapping):
            raise damage(
                path,
                shown(value),
                "a file's index, or a lane {files, offset, records, skip, step}",
            )
        files = value.get("files")
        if not isinstance(files, (list, tuple)) or not files:
            raise damage(f"{path}.files", shown(files), "a list of file indices")
        indices = tuple(self.file(f, f"{path}.files[{i}]") for i, f in enumerate(files))
        offset = count_of(value.get("offset"), f"{path}.offset")
        if self.sizes is not None and offset > self.sizes[indices[0]]:
            raise damage(
                f"{path}.offset",
                offset,
                f"0 to {self.sizes[indices[0]]}, the size of the file it is in",
            )
        records = count_of(value.get("records"), f"{path}.records")
        if records > offset:  # each record before the offset takes a byte of it at least
            raise damage(f"{path}.records", records, f"0 to {offset}, at most its offset")
        return Lane(
            indices,
            offset,
            records,
            count_of(value.get("skip"), f"{path}.skip"),
            count_of(value.get("step"), f"{path}.step", 1),
        )

    def leftover(self, value: object, path: str) -> Leftover:
        if not isinstance(value, Mapping):
            raise damage(path, shown(value), "a leftover {lanes, count, order, start, step}")
        lanes = value.get("lanes")
        if not isinstance(lanes, (list, tuple)) or not lanes:
            raise damage(f"{path}.lanes", shown(lanes), "a list of lanes")
        for i, one in enumerate(lanes):
            self.lane(one, f"{path}.lanes[{i}]")
        order = value.get("order")
        if order is not None and not is_int(order):
            raise damage(f"{path}.order", order, "a seed (an int), or null")
        return Leftover(
            tuple(lanes),
            count_of(value.get("count"), f"{path}.count"),
            order,
            count_of(value.get("start"), f"{path}.start"),
            count_of(value.get("step"), f"{path}.step", 1),
        )

    def file(self, value: object, path: str) -> int:
        if not is_int(value) or not 0 <= value < self.files:  # type: ignore[operator]
            raise damage(path, value, f"a file's index, 0 to {self.files - 1}")
        assert isinstance(value, int)
        return value


def check_kind(value: object, where: str) -> None:
    """Refuse anything but a position (or a replica's state) of this version."""
    if not isinstance(value, Mapping) or value.get("kind") != KIND:
        raise ConfigError(
            "not a data position",
            source=where,
            value=shown(value),
            expected=f'what Stream.state() or merge_states() returns (kind "{KIND}")',
        )
    if value.get("version") != VERSION:
        raise ConfigError(
            "a data position of another version of vtrain",
            source=where,
            path="version",
            value=value.get("version"),
            expected=str(VERSION),
        )


def is_int(value: object) -> bool:
    """True for an int that is no bool."""
    return isinstance(value, int) and not isinstance(value, bool)


MOST = 2**53
"""The largest count a position holds: JSON's exact integers end there (and no epoch, offset or
record count comes near)."""


def count_of(value: object, path: str, least: int = 0, where: str = "resume") -> int:
    """`value` if it is an int of `least` to `MOST`; else the error for a damaged position."""
    if not is_int(value) or value < least:  # type: ignore[operator]
        raise damage(path, value, f"an int of {least} or more", where)
    assert isinstance(value, int)
    if value > MOST:
        raise damage(path, value, "an int of at most 2**53, JSON's exact integers", where)
    return value


def damage(path: str, value: object, expected: str, where: str = "resume") -> ConfigError:
    """The error for a damaged position: the field, what it holds, what it should."""
    return ConfigError(
        "a damaged position",
        source=where,
        path=path,
        value=value,
        expected=expected,
        hint="pass the position merge_states() made, as it was saved",
    )


def shown(value: object) -> object:
    """A value for an error message: big documents are named by their type and size."""
    if isinstance(value, Mapping):
        return f"a mapping of {len(value)} keys"
    if isinstance(value, (list, tuple)) and len(value) > 8:
        return f"a list of {len(value)}"
    return value
