"""`stream()`: this replica's records of a split, epoch after epoch, with a position to resume.

Iterating a `Stream` gives this replica's records of the current epoch, as
`records()` does, and stops at the epoch's end; `next_epoch()` (or a loop over
`epochs()`) deals the whole split again. `state()` is where the replica
stands; `merge_states` makes one global position of every replica's, and
`stream(resume=position)` with any number of readers deals out only what is
left of that epoch: each record still due to exactly one reader, none again.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from vtrain.data.bq_table import is_table
from vtrain.data.deal import epoch_work, rest_work, spent
from vtrain.data.file_source import FileSource
from vtrain.data.files import check_enough
from vtrain.data.placement import choose_place
from vtrain.data.plan import Plan
from vtrain.data.records import check_table_options
from vtrain.data.shuffle import DEFAULT_BUFFER, Shuffle
from vtrain.data.source import Source
from vtrain.data.splits import FORMAT_VARIABLE, SPLITS, check_split
from vtrain.data.stream_position import KIND, VERSION, Replica, check_position, digest
from vtrain.errors import StorageError, UsageError


class Stream:
    """This replica's records of a split, epoch after epoch; `state()` is where it stands.

    Made by `stream()`: `source` is where the records are read (a split's files, a
    BigQuery table's streams; None for a replica that reads nothing), and this replica
    is reader `rank` of `world_size`. `shuffle` is the seeded order (None: the files'
    own), and `by_record` True when readers share the records of the same files.
    """

    def __init__(
        self,
        source: Source | None,
        *,
        split: str,
        rank: int | None,
        world_size: int,
        shuffle: Shuffle | None,
        by_record: bool,
    ) -> None:
        self.split = split
        self.rank = rank
        """This replica's place among the readers; None when it reads nothing."""
        self.world_size = world_size
        self.resumed_from: int | None = None
        """How many replicas the position resumed from had; None when not resumed."""
        self._source = source
        self._shuffle = shuffle
        self._by_record = by_record
        self._epoch = 0
        self._head: dict[str, Any] = {}
        self._counts: dict[str, int] = {}
        self._plan: Plan | None = None
        self._records: Iterator[Any] = iter(())

    @property
    def epoch(self) -> int:
        """The epoch being read, from 0."""
        return self._epoch

    def __iter__(self) -> Iterator[Any]:
        return self._records

    def __next__(self) -> Any:
        return next(self._records)

    @property
    def _reading(self) -> Source:
        assert self._source is not None  # set for a replica that reads
        return self._source

    def state(self) -> dict[str, Any] | None:
        """This replica's position: a small JSON-able dict for `merge_states`; None when this
        replica reads nothing. Cheap enough to take at every step."""
        if self._plan is None:
            return None
        return {**self._head, "counts": self._counts, "replica": self._plan.to_json()}

    def next_epoch(self) -> int:
        """Start the next epoch, the whole split dealt again among this stream's readers; return
        its number. What this replica had not read of the current one is passed over."""
        if self.rank is None:
            self._epoch += 1
            return self._epoch
        source = self._reading.for_epoch(self.world_size)
        if source is not self._source:
            self._source, self._counts = source, {}
        self._fresh(self._epoch + 1)
        return self._epoch

    def epochs(self, count: int | None = None) -> Iterator[int]:
        """Yield the current epoch's number, then each next one's, while it is below `count`
        (forever when None); the next epoch starts when the loop asks for it."""
        while count is None or self._epoch < count:
            yield self._epoch
            self.next_epoch()

    def _fresh(self, epoch: int) -> None:
        assert self.rank is not None
        work = epoch_work(
            self._reading.count, epoch, self._shuffle, self.rank, self.world_size, self._by_record
        )
        self._start(epoch, 0, 0, Replica(work))

    def _start(
        self, epoch: int, deal: int, before: int, replica: Replica, by_record: bool | None = None
    ) -> None:
        """Give out `replica`'s work; `by_record` says how it was dealt (as this stream deals)."""
        assert self.rank is not None
        self._epoch = epoch
        self._head = {
            "kind": KIND,
            "version": VERSION,
            "split": self.split,
            "source": self._reading.identity,
            "listing": digest(self._reading.identity),
            "shuffle": None if self._shuffle is None else self._shuffle.to_json(),
            "by_record": self._by_record if by_record is None else by_record,
            "epoch": epoch,
            "deal": deal,
            "before": before,
            "world_size": self.world_size,
            "rank": self.rank,
        }
        shuffle, rank = self._shuffle, self.rank
        self._plan = Plan(
            self._reading,
            replica,
            learn=self._learn,
            buffer=0 if shuffle is None else shuffle.buffer,
            seeds=None
            if shuffle is None
            else (lambda block: shuffle.block_seed(epoch, deal, rank, block)),
        )
        self._records = self._plan.records()

    def _learn(self, index: int, records: int) -> None:
        """Remember how many records a file holds: the position then knows what is left."""
        known = self._counts.get(str(index))
        if known is None:
            self._counts = {**self._counts, str(index): records}  # states share the old one
        elif known != records:
            raise StorageError(
                f"holds {records} records now, {known} when read before",
                source=self._reading.names[index],
                hint="a split must not change while a job reads it",
            )

    def _resume(self, position: Mapping[str, Any]) -> None:
        assert self.rank is not None
        checked = check_position(
            position,
            split=self.split,
            source=self._reading,
            shuffle=None if self._shuffle is None else self._shuffle.to_json(),
        )
        from vtrain.data.position_proof import prove_whole

        prove_whole(position, checked, files=self._reading.count, shuffle=self._shuffle)
        self._counts = dict(checked.counts)
        self.resumed_from = len(checked.replicas)
        left = [w for r in checked.replicas for w in r.remaining()]
        sizes = self._reading.sizes
        if all(spent(w, sizes) for w in left):
            self._fresh(checked.epoch + 1)
        elif self.world_size == len(checked.replicas):
            # The deal goes on as it was dealt, whatever this stream's by_record: its position
            # says so, and a resume checks the work against it.
            replica = checked.replicas[self.rank]
            self._start(checked.epoch, checked.deal, checked.before, replica, checked.by_record)
        else:
            work = rest_work(left, self.rank, self.world_size, self._by_record, sizes)
            self._start(checked.epoch, checked.deal + 1, checked.read, Replica(work))


def stream(
    split: str = "training",
    *,
    rank: int | None = None,
    world_size: int | None = None,
    resume: Mapping[str, Any] | None = None,
    shuffle_seed: int | None = None,
    buffer: int | None = None,
    by_record: bool = False,
    format: str | None = None,
    check_crc: bool = True,
    uri: str | None = None,
    environ: Mapping[str, str] | None = None,
    gcs_mount: str | None = None,
    fuse: bool | None = None,
    client: Any = None,
) -> Stream:
    """This replica's records of `split`, epoch after epoch, with `state()` to resume from.

    The split, placement and format (`rank`, `world_size`, `by_record`, `format`,
    `check_crc`, `uri`, `environ`, `gcs_mount`, `fuse`, `client`) are as for
    `records()`. `shuffle_seed`
    shuffles the files' order each epoch and gives records out `buffer` at a time
    (default 1024) in a seeded order. `resume` is a global position from
    `merge_states`: what is left of its epoch is dealt among this stream's readers,
    however many the position was taken from; a position whose epoch is used up
    resumes at the next one. A BigQuery split is read by its read session's
    streams, resumed at a row offset while the session lives.
    """
    env = os.environ if environ is None else environ
    check_split(split)
    for name, value in (("by_record", by_record), ("check_crc", check_crc)):
        if not isinstance(value, bool):
            raise UsageError("not a bool", source=name, value=value, expected="True or False")
    shuffle = _shuffle(shuffle_seed, buffer)
    if resume is not None and not isinstance(resume, Mapping):
        raise UsageError(
            "not a position",
            source="resume",
            value=resume,
            expected="what vtrain.data.merge_states() returns, or None",
        )
    place = choose_place(split, rank, world_size, env)
    if place is None:
        return Stream(None, split=split, rank=None, world_size=1, shuffle=None, by_record=False)
    pattern = env.get(SPLITS[split]) if uri is None else uri
    source: Source
    if is_table(pattern, env.get(FORMAT_VARIABLE)):
        from vtrain.data.bq_source import BigQuerySource

        check_table_options(format=format, gcs_mount=gcs_mount, fuse=fuse, by_record=by_record)
        source = BigQuerySource.open(
            split, uri=uri, place=place, resume=resume, environ=env, storage_client=client
        )
    else:
        files = FileSource.list(
            split,
            format=format,
            check_crc=check_crc,
            uri=uri,
            environ=env,
            gcs_mount=gcs_mount,
            fuse=fuse,
            client=client,
        )
        if not by_record:
            check_enough(files.count, place[1], "uri" if uri else SPLITS[split], files.uri)
        source = files
    reader, readers = place
    made = Stream(
        source, split=split, rank=reader, world_size=readers, shuffle=shuffle, by_record=by_record
    )
    if resume is None:
        made._fresh(0)
    else:
        made._resume(resume)
    return made


def _shuffle(seed: object, buffer: object) -> Shuffle | None:
    if seed is None:
        if buffer is not None:
            raise UsageError(
                "has no meaning without shuffle_seed",
                source="buffer",
                value=buffer,
                expected="None, or a shuffle_seed as well",
            )
        return None
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise UsageError("not an integer", source="shuffle_seed", value=seed, expected="an int")
    if buffer is None:
        buffer = DEFAULT_BUFFER
    if not isinstance(buffer, int) or isinstance(buffer, bool) or buffer < 1:
        raise UsageError(
            "not a positive integer", source="buffer", value=buffer, expected="records, 1 or more"
        )
    return Shuffle(seed, buffer)
