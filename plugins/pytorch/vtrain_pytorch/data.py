"""Torch `IterableDataset`s: `ShareDataset` over one rank's share, split across loader workers,
and `StreamDataset` over a `vtrain.data.Stream`, whose position a checkpoint saves;
`StreamBatches`, the DataLoader of a stream that `handle.batches` gives.

A DataLoader with k workers gives each a copy of the dataset; worker i of k
reads part i of k of the share (`Share.part`), so together they read every
record of the share once, every epoch. The copies travel to the workers by
pickle (fork or spawn), so the dataset holds plain data only: the share, and
no storage client (each worker makes its own when it reads gs://).

Importing this module imports torch; `import vtrain_pytorch` does not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from vtrain import UsageError
from vtrain.data import Share, Stream, check_format, read_share
from vtrain.progress import tracker


def check_options(format: object, transform: object, check_crc: object) -> None:
    """A UsageError naming the first bad argument of `ShareDataset` (or `handle.dataset`)."""
    if format is not None:
        check_format(format)
    if transform is not None and not callable(transform):
        raise UsageError(
            "not callable",
            source="transform",
            value=transform,
            expected="None, or a function that takes a record and returns a sample",
        )
    if not isinstance(check_crc, bool):
        raise UsageError(
            "not a bool", source="check_crc", value=check_crc, expected="True or False"
        )


class ShareDataset(IterableDataset[Any]):  # type: ignore[misc]
    """The records of `share`, each through `transform`; DataLoader workers read disjoint parts.

    Records are dicts (JSON Lines, CSV) or bytes (TFRecord); see `vtrain.data.read_share`.
    There is no `len()`: a share knows its files, not how many records they hold.
    `transform` must pickle (a module-level function) for a DataLoader that spawns.
    """

    def __init__(
        self,
        share: Share,
        *,
        format: str | None = None,
        transform: Callable[[Any], Any] | None = None,
        check_crc: bool = True,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(share, Share):
            raise UsageError(
                "not a Share",
                source="share",
                value=share,
                expected="what vtrain.data.files() or handle.dataset().share gives",
            )
        check_options(format, transform, check_crc)
        self.share = share
        """This rank's share: the files it reads and its record stride within them."""
        self.format = format
        self.transform = transform
        self.check_crc = check_crc
        self.environ = None if environ is None else dict(environ)

    def part(self) -> Share:
        """What this process reads: the whole share, or this DataLoader worker's part of it."""
        worker = get_worker_info()
        if worker is None:
            return self.share
        return self.share.part(worker.id, worker.num_workers)

    def __iter__(self) -> Iterator[Any]:
        records = read_share(
            self.part(), format=self.format, check_crc=self.check_crc, environ=self.environ
        )
        if self.transform is None:
            return records
        return map(self.transform, records)

    def __repr__(self) -> str:
        share = self.share
        return (
            f"ShareDataset(split={share.split!r}, rank={share.rank}, "
            f"world_size={share.world_size}, files={len(share.files)}, "
            f"record_shard={share.record_shard})"
        )


class StreamDataset(IterableDataset[Any]):  # type: ignore[misc]
    """The records of a `vtrain.data.Stream`'s current epoch, each through `transform`.

    Read in the training process (a DataLoader with `num_workers=0`, which takes
    exactly a batch at a time): the position `state()` gives is then exactly what
    the steps so far consumed, for `TrainingState.save(data=...)`. `epochs()`,
    `next_epoch()`, `epoch` and `state()` are the stream's.
    """

    def __init__(self, stream: Stream, *, transform: Callable[[Any], Any] | None = None) -> None:
        if not isinstance(stream, Stream):
            raise UsageError(
                "not a Stream",
                source="stream",
                value=stream,
                expected="what vtrain.data.stream() or handle.stream() gives",
            )
        check_options(None, transform, True)
        self.stream = stream
        self.transform = transform

    def __iter__(self) -> Iterator[Any]:
        worker = get_worker_info()
        if worker is not None:
            # A loader worker reads a copy of the stream: the position here would stand still.
            raise UsageError(
                f"read in DataLoader worker {worker.id} of {worker.num_workers}",
                source="StreamDataset",
                value=worker.num_workers,
                expected="DataLoader(..., num_workers=0): the position is kept in this process",
                hint="handle.dataset() reads a share with loader workers, without a position",
            )
        records = iter(self.stream)
        return records if self.transform is None else map(self.transform, records)

    def state(self) -> dict[str, Any] | None:
        """The stream's position (see `vtrain.data.Stream.state`)."""
        return self.stream.state()

    def epochs(self, count: int | None = None) -> Iterator[int]:
        """The stream's epochs (see `vtrain.data.Stream.epochs`)."""
        return self.stream.epochs(count)

    def next_epoch(self) -> int:
        """Start the stream's next epoch; return its number."""
        return self.stream.next_epoch()

    @property
    def epoch(self) -> int:
        """The epoch being read, from 0."""
        return self.stream.epoch

    def __repr__(self) -> str:
        stream = self.stream
        return (
            f"StreamDataset(split={stream.split!r}, rank={stream.rank}, "
            f"world_size={stream.world_size}, epoch={stream.epoch})"
        )


class StreamBatches(DataLoader[Any]):  # type: ignore[misc]
    """A DataLoader (of a `StreamDataset`) that marks each batch it hands out as progress.

    A batch taken is a step of the loop (`vtrain.progress.Tracker.batch`), unless the
    loop marks its own (`handle.step()`, the Lightning callback): the watchdog and the
    live view then count steps without a word in the training loop.
    """

    def __iter__(self) -> Iterator[Any]:
        progress = tracker()
        for batch in super().__iter__():
            progress.batch()
            yield batch
