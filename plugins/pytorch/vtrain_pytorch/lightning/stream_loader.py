"""`StreamLoader`: batches of a `vtrain.data.Stream` for `Trainer.fit`, and where they stood.

Lightning fetches one batch ahead of the one it trains when the loader has no
length (`_PrefetchDataFetcher`): when a step ends, `stream.state()` already
counts the next batch, and a commit taking it would skip that batch on resume.
So the loader takes the stream's position after each batch it hands out, in
order, and `VtrainCheckpoint` marks each batch trained (`on_train_batch_end`):
a commit saves the position after the last batch trained, never one fetched.

DDP needs the same number of steps on every rank, and a resume with another
world size deals what is left unevenly (a share of 62 records beside one of
154). Before each batch goes out the ranks agree (one all-reduce of a flag)
whether any of them still has one: the epoch ends when every share is read,
and a rank whose share ran out first takes empty steps (`collate_fn([])`, for
which `training_step` returns a zero loss that touches every parameter) while
the others train on. So every record is trained once; none is dropped to even
the shares out.

No `state_dict()` here on purpose: Lightning would save global rank 0's alone
and load it into every rank. The position goes into the vtrain commit, every
rank's merged, and `handle.stream(resume=resumed(options))` deals what is left.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from vtrain.errors import UsageError

KEEP = 1024
"""Positions kept ahead of the last batch trained: far more than Lightning fetches ahead."""


class StreamLoader:
    """Batches of `batch_size` records of `stream` (a DataLoader in this process); epoch by epoch.

    Each iteration (each epoch `fit` runs) reads what is left of the stream's
    current epoch first, then `next_epoch()` each time after. `collate_fn` and
    `transform` are the DataLoader's and `StreamDataset`'s.
    """

    def __init__(
        self,
        stream: Any,
        *,
        batch_size: int,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        transform: Callable[[Any], Any] | None = None,
    ) -> None:
        from torch.utils.data import DataLoader, default_collate

        from vtrain_pytorch.data import StreamDataset

        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise UsageError(
                "not a batch size",
                source="batch_size",
                value=batch_size,
                expected="the records each process trains per step: an int >= 1",
            )
        self.stream = stream
        self.dataset = StreamDataset(stream, transform=transform)
        self.batch_size = batch_size
        self._collate = collate_fn or default_collate
        self._loader = DataLoader(self.dataset, batch_size=batch_size, collate_fn=self._collate)
        self._positions: dict[int, dict[str, Any] | None] = {}
        self._taken = 0
        self._trained = 0
        self._last: dict[str, Any] | None = stream.state()
        self._end: dict[str, Any] | None = None
        self._ended = False
        self._started = False

    def __iter__(self) -> Iterator[Any]:
        first = not self._started
        if self._started:
            self.stream.next_epoch()
        self._started = True
        self._begin()
        batches = iter(self._loader)
        batch = next(batches, None)
        anyone = ranks_with(batch is not None)
        if first and anyone == 0:
            # Resumed from a commit at the epoch's end: its records are all trained.
            self.stream.next_epoch()
            self._begin()
            batches = iter(self._loader)
            batch = next(batches, None)
            anyone = ranks_with(batch is not None)
        while anyone:
            if batch is None:
                batch = self._empty()
            self._positions[self._taken] = self.stream.state()
            self._positions.pop(self._taken - KEEP, None)
            self._taken += 1
            yield batch
            batch = next(batches, None)
            anyone = ranks_with(batch is not None)
        self._end, self._ended = self.stream.state(), True

    def _begin(self) -> None:
        self._positions, self._taken, self._trained = {}, 0, 0
        self._last, self._end, self._ended = self.stream.state(), None, False

    def _empty(self) -> Any:
        """The batch of a step this rank takes after its share ran out: `collate_fn([])`."""
        try:
            return self._collate([])
        except Exception as e:
            raise UsageError(
                f"this rank's share ran out before the others' and collate_fn([]) failed ({e!r})",
                source="collate_fn",
                value=self._collate,
                expected="a collate_fn that makes an empty batch of [] (for the empty steps "
                "DDP needs while the other ranks train on)",
                hint="and a training_step that returns a zero loss for it, touching every "
                "parameter: sum(p.sum() * 0 for p in self.parameters())",
            ) from e

    def trained(self) -> None:
        """The oldest batch handed out and not yet marked has been trained (a step ended)."""
        if self._trained in self._positions:
            self._last = self._positions.pop(self._trained)
        self._trained += 1

    def state(self) -> dict[str, Any] | None:
        """This rank's position after the last batch trained (at the epoch's end, its end)."""
        if self._ended and self._trained >= self._taken:
            return self._end
        return self._last


def ranks_with(have: bool) -> int:
    """How many ranks have a batch (a collective: every rank asks as often as the others)."""
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return int(have)
    device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    flag = torch.tensor([int(have)], device=device)
    dist.all_reduce(flag)
    return int(flag.item())


def loaders(trainer: Any) -> list[StreamLoader]:
    """The StreamLoaders `trainer` fits on (none when it reads other data)."""
    from lightning.pytorch.utilities.combined_loader import CombinedLoader

    found = trainer.train_dataloader
    if isinstance(found, CombinedLoader):
        found = found.flattened
    if isinstance(found, StreamLoader):
        return [found]
    if isinstance(found, (list, tuple)):
        return [f for f in found if isinstance(f, StreamLoader)]
    if isinstance(found, dict):
        return [f for f in found.values() if isinstance(f, StreamLoader)]
    return []


def mark_trained(trainer: Any) -> None:
    """A step ended: its batch of every StreamLoader was trained."""
    for loader in loaders(trainer):
        loader.trained()


def gather_position(trainer: Any) -> str | None:
    """Every rank's position after the last batch trained, merged, as JSON (a collective).

    None when the trainer reads no StreamLoader; more than one is refused.
    """
    from vtrain_pytorch.positions import gather

    found = loaders(trainer)
    if not found:
        return None
    if len(found) > 1:
        raise UsageError(
            f"{len(found)} StreamLoaders in one fit",
            source="train_dataloaders",
            value=len(found),
            expected="one StreamLoader: a commit saves one data position",
        )
    return gather(found[0])


def check_every(every_n_train_steps: object) -> int | None:
    """`every_n_train_steps` of VtrainCheckpoint, checked: None or an int >= 1."""
    if every_n_train_steps is None:
        return None
    if (
        isinstance(every_n_train_steps, bool)
        or not isinstance(every_n_train_steps, int)
        or every_n_train_steps < 1
    ):
        raise UsageError(
            "not a step count",
            source="every_n_train_steps",
            value=every_n_train_steps,
            expected="None (commit at epoch ends only) or an int >= 1",
        )
    return every_n_train_steps
