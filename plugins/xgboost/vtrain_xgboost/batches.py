"""XGBoost's data iterators: `ShareBatches` over a share (external memory), `StreamBatches`
over a positioned stream (`handle.batches`). Imports XGBoost: load lazily.

Each batch handed to XGBoost marks progress that is no step (`Tracker.alive`): XGBoost
asks for them while it builds a matrix, before it trains, and again on each of its
passes, never once a round. As steps they would count the batches of every pass and
stand for the median step time until the rounds outnumbered them; a long build keeps
the trainer under its first-step allowance this way, counted from the last batch.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

import xgboost as xgb

from vtrain import UsageError
from vtrain.data import Stream
from vtrain.progress import tracker
from vtrain_xgboost.table import Table, columns_of, row_of


class ShareBatches(xgb.DataIter):  # type: ignore[misc]
    """The share's records, `rows` at a time, read from the files again on every pass.

    XGBoost makes several passes (the sketch, then the pages); `reset` starts the
    next one from the first file. `passes` and `batches` count what was read.
    """

    def __init__(self, table: Table, rows: int, cache_prefix: str) -> None:
        super().__init__(cache_prefix=cache_prefix, release_data=True)
        self.table, self.rows = table, rows
        self.passes = self.batches = 0
        self._reading: Generator[tuple[Any, Any], None, None] | None = None

    def reset(self) -> None:
        """Start again from the share's first record (the open file is closed)."""
        if self._reading is not None:
            self._reading.close()
        self._reading = None
        self.passes += 1

    def next(self, input_data: Callable[..., None]) -> bool:
        """Hand XGBoost the next batch; False after the last one."""
        if self._reading is None:
            self._reading = self.table.batches(self.rows)
        batch = next(self._reading, None)
        if batch is None:
            return False
        x, y = batch
        input_data(data=x, label=y, feature_names=list(self.table.features or ()))
        self.batches += 1
        tracker().alive()
        return True


class StreamBatches(xgb.DataIter):  # type: ignore[misc]
    """The stream's current epoch, `rows` records a batch, as (features, label) arrays.

    The first pass reads the records from the stream, so its position (`state()`)
    moves past them; XGBoost's later passes (the sketch, then the pages) read the
    batches kept from the first. A matrix is made of one epoch: `next_epoch()` on
    the stream, and a new iterator, for the next.
    """

    def __init__(
        self,
        stream: Stream,
        rows: int,
        *,
        label: str,
        features: Sequence[str] | None = None,
        distributed: bool = False,
    ) -> None:
        super().__init__(release_data=False)  # first: XGBoost's __del__ reads what it sets
        if not isinstance(stream, Stream):
            raise UsageError(
                "not a Stream",
                source="batches",
                value=stream,
                expected="what vtrain.data.stream() or handle.stream() gives",
            )
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
            raise UsageError(
                "not a count", source="batches(batch_size=)", value=rows, expected="an int >= 1"
            )
        if not isinstance(label, str) or not label:
            raise UsageError(
                "not a column name", source="batches(label=)", value=label, expected="a str"
            )
        self.stream, self.rows, self.label = stream, rows, label
        self.features = None if features is None else tuple(features)
        self.distributed = distributed
        self.passes = 0
        self._kept: list[tuple[Any, Any]] | None = None
        self._at = 0

    def state(self) -> dict[str, Any] | None:
        """The stream's position (see `vtrain.data.Stream.state`), for `save_checkpoint(data=)`."""
        return self.stream.state()

    def reset(self) -> None:
        """Start the next pass from the epoch's first batch."""
        self._at = 0
        self.passes += 1

    def next(self, input_data: Callable[..., None]) -> bool:
        """Hand XGBoost the next batch; False after the last one."""
        if self._kept is None:
            self._kept = self._read()
        if self._at >= len(self._kept):
            return False
        x, y = self._kept[self._at]
        self._at += 1
        input_data(data=x, label=y, feature_names=list(self.features or ()))
        tracker().alive()
        return True

    def _read(self) -> list[tuple[Any, Any]]:
        import numpy as np

        where = f"stream {self.stream.split!r}"
        records = list(self.stream)  # the epoch's rest: the position moves past it
        if self.features is None:
            head = columns_of(where, 1, records[0]) if records else {}
            first = [c for c in head if c != self.label]
            if self.distributed:
                from xgboost import collective

                # Rank 0's columns for all: every trainer's matrix must have the same ones.
                first = collective.broadcast(first if collective.get_rank() == 0 else None, 0)
            self.features = tuple(first)
        kept = []
        for start in range(0, len(records), self.rows):
            part = records[start : start + self.rows]
            rows = [
                row_of(where, start + i + 1, r, self.label, self.features)
                for i, r in enumerate(part)
            ]
            kept.append(
                (
                    np.array([x for x, _ in rows], np.float32).reshape(len(rows), -1),
                    np.array([y for _, y in rows], np.float32),
                )
            )
        return kept
