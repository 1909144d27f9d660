"""`ShareDataset`: a torch `IterableDataset` over one rank's share, split across loader workers.

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

from torch.utils.data import IterableDataset, get_worker_info

from vtrain import UsageError
from vtrain.data import Share, check_format, read_share


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
