"""`RecordIter`: an `mx.io.DataIter` over a worker's share of a JSON Lines or CSV split.

MXNet's own iterators (CSVIter, ImageRecordIter) cut one file set into
`num_parts` by record; vtrain.data already dealt each worker its own files
(or its record stride), so this iterator reads only that share, batch by batch,
without loading it into memory. Importing this module imports MXNet.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import mxnet as mx
import numpy as np

from vtrain import UsageError

LAST_BATCH = ("pad", "discard")


def check_columns(data: object, label: object) -> tuple[list[str], str | None]:
    """(feature columns, label column) when they name columns; else a UsageError."""
    if isinstance(data, str) or not isinstance(data, Sequence) or not data:
        raise UsageError(
            "not a list of column names", source="data", value=data,
            expected='the feature columns, such as ["x0", "x1"]',
        )  # fmt: skip
    for name in data:
        if not isinstance(name, str):
            raise UsageError("not a column name", source="data", value=name, expected="a str")
    if label is not None and not isinstance(label, str):
        raise UsageError("not a column name", source="label", value=label,
                         expected="a str, or None for data without labels")  # fmt: skip
    return list(data), label


def check_batching(batch_size: object, last_batch: object) -> tuple[int, str]:
    """(batch_size, last_batch) when valid; else a UsageError naming the argument."""
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise UsageError("not a batch size", source="batch_size", value=batch_size,
                         expected="an int of 1 or more")  # fmt: skip
    if last_batch not in LAST_BATCH:
        raise UsageError("unknown last-batch rule", source="last_batch", value=last_batch,
                         expected=" or ".join(LAST_BATCH))  # fmt: skip
    assert isinstance(last_batch, str)
    return batch_size, last_batch


def epochs_of(stream: Any) -> Callable[[], Iterator[dict[str, Any]]]:
    """`RecordIter`'s opener over a `vtrain.data.Stream`: the stream as it stands, then on
    each reset after a record was read, its next epoch (the whole split dealt again)."""
    read = [False]

    def records() -> Iterator[dict[str, Any]]:
        for record in stream:  # one at a time: the stream's position is what was taken
            read[0] = True
            yield record

    def open_records() -> Iterator[dict[str, Any]]:
        # A reset before any record (a loop that resets at each epoch's start) keeps a
        # resumed epoch's place; only a reset after reading moves on.
        if read[0]:
            stream.next_epoch()
            read[0] = False
        return records()

    return open_records


def _number(record: dict[str, Any], column: str, index: int) -> float:
    value = record.get(column)
    if value is None or value == "":
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        raise UsageError(
            "not a number",
            source=f"record {index} of this worker's share, column {column!r}",
            value=value,
            expected="a number, or empty/null for a missing value (read as NaN)",
        ) from None


class RecordIter(mx.io.DataIter):  # type: ignore[misc]
    """Batches of (data, label) from the records `open_records()` streams.

    `data` names the feature columns (a float32 matrix of batch_size x
    len(data)), `label` the label column (a float32 vector), missing values
    read as NaN. The last, short batch is padded with zeros (`batch.pad` says
    how many rows are padding, as NDArrayIter does) or discarded. `reset()`
    starts the share over: one pass is one epoch of this worker.
    """

    def __init__(
        self,
        open_records: Callable[[], Iterator[dict[str, Any]]],
        *,
        data: Sequence[str],
        label: str | None,
        batch_size: int,
        last_batch: str = "pad",
        data_name: str = "data",
        label_name: str = "softmax_label",
    ) -> None:
        self._columns, self._label = check_columns(data, label)
        batch_size, self._last_batch = check_batching(batch_size, last_batch)
        super().__init__(batch_size)
        self._open = open_records
        self._records = open_records()
        self._seen = 0
        self.provide_data = [mx.io.DataDesc(data_name, (batch_size, len(self._columns)))]
        self.provide_label = [] if label is None else [mx.io.DataDesc(label_name, (batch_size,))]

    def reset(self) -> None:
        self._records = self._open()
        self._seen = 0

    def next(self) -> mx.io.DataBatch:
        rows = []
        for record in self._records:
            rows.append(record)
            if len(rows) == self.batch_size:
                break
        if not rows or (len(rows) < self.batch_size and self._last_batch == "discard"):
            raise StopIteration
        pad = self.batch_size - len(rows)
        features = np.zeros((self.batch_size, len(self._columns)), dtype=np.float32)
        labels = np.zeros((self.batch_size,), dtype=np.float32)
        for i, record in enumerate(rows):
            index = self._seen + i
            features[i] = [_number(record, c, index) for c in self._columns]
            if self._label is not None:
                labels[i] = _number(record, self._label, index)
        self._seen += len(rows)
        return mx.io.DataBatch(
            data=[mx.nd.array(features, dtype=np.float32)],
            label=[] if self._label is None else [mx.nd.array(labels, dtype=np.float32)],
            pad=pad,
            provide_data=self.provide_data,
            provide_label=self.provide_label,
        )
