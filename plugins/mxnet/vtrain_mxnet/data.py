"""`RecordIter`: an `mx.io.DataIter` over a worker's share of a JSON Lines or CSV split.

MXNet's own iterators (CSVIter, ImageRecordIter) cut one file set into
`num_parts` by record; vtrain.data already dealt each worker its own files
(or its record stride), so this iterator reads only that share, batch by batch,
without loading it into memory. Importing this module imports MXNet.

Under dist_sync every worker must take as many steps as the others (each step
pushes and pulls every gradient), but a stream resumed on another number of
workers deals what is left unevenly. So a stream's iterator asks, before each
batch, how many workers still have records (`workers_with_records`): the epoch
ends when none has; a worker whose share ran out first gets batches of padding
alone (`pad == batch_size`) while the others read on. No record is dropped to
even the shares out, and none is read twice.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import mxnet as mx
import numpy as np

from vtrain import UsageError
from vtrain.progress import tracker

LAST_BATCH = ("pad", "discard")

MORE_KEY = 199_998
"""The kvstore key the workers sum their "records left" flags on. No Trainer uses it (they
number parameters from 0) nor does vtrain_mxnet.rank_zero (199_999); ps-lite picks a server
with key * 9973 in a C int, so the key keeps that product below 2**31."""

_KEYED: weakref.WeakSet[Any] = weakref.WeakSet()
"""The kvstores MORE_KEY was initialised on: a second init would be a push from rank 0 alone,
which the servers would wait to sum with the other workers' forever."""


def check_columns(data: object, label: object) -> tuple[list[str], str | None]:
    """(feature columns, label column) when they name columns; else a UsageError."""
    if isinstance(data, str) or not isinstance(data, Sequence) or not data:
        raise UsageError(
            "not a list of column names",
            source="data",
            value=data,
            expected='the feature columns, such as ["x0", "x1"]',
        )
    for name in data:
        if not isinstance(name, str):
            raise UsageError("not a column name", source="data", value=name, expected="a str")
    if label is not None and not isinstance(label, str):
        raise UsageError(
            "not a column name",
            source="label",
            value=label,
            expected="a str, or None for data without labels",
        )
    return list(data), label


def check_batching(batch_size: object, last_batch: object) -> tuple[int, str]:
    """(batch_size, last_batch) when valid; else a UsageError naming the argument."""
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise UsageError(
            "not a batch size",
            source="batch_size",
            value=batch_size,
            expected="an int of 1 or more",
        )
    if last_batch not in LAST_BATCH:
        raise UsageError(
            "unknown last-batch rule",
            source="last_batch",
            value=last_batch,
            expected=" or ".join(LAST_BATCH),
        )
    assert isinstance(last_batch, str)
    return batch_size, last_batch


def epochs_of(stream: Any) -> Callable[[], Iterator[dict[str, Any]]]:
    """`RecordIter`'s opener over a `vtrain.data.Stream`: the stream as it stands, then on
    each reset after a record was read or the share found spent, its next epoch (the whole
    split dealt again)."""
    read = [False]

    def records() -> Iterator[dict[str, Any]]:
        for record in stream:  # one at a time: the stream's position is what was taken
            read[0] = True
            yield record
        # Spent, perhaps empty from the start (a resume dealt this worker nothing, while the
        # others read on): the reset that ends this pass moves on with theirs.
        read[0] = True

    def open_records() -> Iterator[dict[str, Any]]:
        # A reset before any record (a loop that resets at each epoch's start) keeps a
        # resumed epoch's place; only a reset after reading moves on.
        if read[0]:
            stream.next_epoch()
            read[0] = False
        return records()

    return open_records


def workers_with_records(kvstore: Any, have: bool, world_size: int) -> int:
    """How many of the `world_size` workers of `kvstore` have a batch left, `have` this one's.

    A collective under dist_sync: every worker asks as often as the others. The first
    ask initialises MORE_KEY (an init waits at ps-lite's barrier for every worker).
    """
    if kvstore not in _KEYED:
        kvstore.init(MORE_KEY, mx.nd.zeros((1,)))
        _KEYED.add(kvstore)
    # Fresh arrays each time: on CPU the pull lands in the pushed array first (it is the
    # key's buffer, which orders this pull after this push), and the value is read before
    # the next push, since MXNet does not order two pushes of one key.
    mine = mx.nd.array([1.0 if have else 0.0])
    total = mx.nd.zeros((1,))
    kvstore.push(MORE_KEY, mine)
    kvstore.pull(MORE_KEY, out=total)
    return check_count(float(total.asscalar()), have, world_size)


def check_count(total: float, have: bool, world_size: int) -> int:
    """`total` as a count of workers with records (this one among them when `have`)."""
    if not total.is_integer() or not int(have) <= total <= world_size:
        raise UsageError(
            "the kvstore's servers changed the sum of the workers' records-left flags",
            source=f"kvstore key {MORE_KEY}",
            value=total,
            expected=f"a whole count from {int(have)} to {world_size} (the workers' flags summed)",
            hint="the servers run an optimizer (update_on_kvstore=True): train with "
            "handle.trainer(), which keeps the optimizer on the workers under dist_sync",
        )
    return int(total)


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

    With `workers_left` (this worker's "have I a batch?" -> how many workers have
    one), a pass ends when no worker has a batch, and a worker out of records
    before the others gets batches of padding alone (`pad == batch_size`): the
    training loop computes its loss on the real rows only (all pad: a zero loss)
    and still calls `trainer.step`, whose push and pull the other workers wait for.

    Each batch marks progress in this process's tracker: with `steps` (a stream's
    batches, `handle.batches`) a step unless the loop marks its own (`handle.step()`);
    else (a share's, which may be an evaluation's) progress that is no step.
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
        workers_left: Callable[[bool], int] | None = None,
        steps: bool = False,
    ) -> None:
        self._columns, self._label = check_columns(data, label)
        batch_size, self._last_batch = check_batching(batch_size, last_batch)
        super().__init__(batch_size)
        self._open = open_records
        self._workers_left = workers_left
        self._steps = steps
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
        have = bool(rows) and not (len(rows) < self.batch_size and self._last_batch == "discard")
        if self._workers_left is not None:
            if self._workers_left(have) == 0:
                raise StopIteration
            if not have:
                rows = []  # another worker reads on: a step of padding alone
        elif not have:
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
        progress = tracker()
        if self._steps:
            progress.batch()
        else:
            progress.alive()
        return mx.io.DataBatch(
            data=[mx.nd.array(features, dtype=np.float32)],
            label=[] if self._label is None else [mx.nd.array(labels, dtype=np.float32)],
            pad=pad,
            provide_data=self.provide_data,
            provide_label=self.provide_label,
        )
