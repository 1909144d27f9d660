"""`share_dmatrix()`: an XGBoost matrix from this trainer's share of a split, in memory or not.

A share whose files fit the memory budget is read into numpy arrays and handed
to `QuantileDMatrix` (or `DMatrix`); a larger one goes through XGBoost's
external memory: a `DataIter` reads the files again, `batch_rows` records at a
time, on every pass XGBoost makes, and XGBoost keeps its pages on disk.

In the collective every trainer must call this, as often and in the same order
as the others, each on its own share: the quantile sketch is merged across the
trainers (an allreduce inside XGBoost), and so are the decisions made here (the
columns when none are named, in memory or not), so that no trainer takes a
different path from the others and waits for them forever.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Generator, Iterator, Mapping, Sequence
from typing import Any

from vtrain import StorageError, UsageError
from vtrain.data import Share, check_format, format_of, read_share

DEFAULT_BATCH_ROWS = 100_000
"""Records per batch on the external-memory path (one XGBoost page each)."""
_FALLBACK_BUDGET = 1 << 30
_MISSING = (None, "")
_EXPECTED_NUMBER = "a number (null, an empty field or an absent column reads as missing)"


def default_memory_budget() -> int:
    """A quarter of this machine's memory, in bytes (1 GiB where it cannot be read)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (AttributeError, ValueError, OSError):
        return _FALLBACK_BUDGET


def _number(value: Any) -> float:
    """A JSON or CSV value as a float: NaN when missing; TypeError or ValueError when no number."""
    if value in _MISSING:
        return math.nan
    if isinstance(value, int | float | str):  # bools are ints: True reads as 1.0
        return float(value)
    raise TypeError(value)


class Table:
    """Reads a share's records as (features, label) batches of float32 arrays, file by file."""

    def __init__(
        self,
        share: Share,
        *,
        label: str,
        features: Sequence[str] | None,
        format: str | None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.share, self.label, self.environ = share, label, environ
        chosen = check_format(format) if format is not None else None
        if chosen is None and share.format is not None:
            chosen = check_format(share.format, "AIP_DATA_FORMAT")
        for name in share.files:
            kind = chosen or format_of(name)
            if kind == "tf-record":
                raise UsageError(
                    "TFRecord records have no named columns to read",
                    source=name,
                    value=kind,
                    expected="JSON Lines or CSV",
                    hint="parse TFRecord examples yourself and build the DMatrix from arrays",
                )
        self.format = chosen
        self.features: tuple[str, ...] | None = None if features is None else tuple(features)

    def records(self) -> Iterator[tuple[str, int, Any]]:
        """(file, record number in the file, record) of every record of the share, in order."""
        # File by file, so that an error names the file; the record stride is applied here
        # over the share's stream of records, which is what Share.record_shard means.
        k, n = self.share.record_shard
        i = 0
        for name in self.share.files:
            one = self.share.replace(files=(name,), record_shard=(0, 1))
            for number, record in enumerate(
                read_share(one, format=self.format, environ=self.environ), 1
            ):
                if i % n == k:
                    yield name, number, record
                i += 1

    def first_columns(self) -> list[str]:
        """The columns of the share's first record but the label, in its order; [] if none."""
        for name, number, record in self.records():
            return [c for c in self._dict(name, number, record) if c != self.label]
        return []

    def batches(self, rows: int) -> Generator[tuple[Any, Any], None, None]:
        """(x, y) arrays of up to `rows` records each; new arrays for every batch."""
        import numpy as np

        assert self.features is not None, "columns are set before reading"
        width = len(self.features)
        x, y, filled = np.empty((rows, width), np.float32), np.empty(rows, np.float32), 0
        for name, number, record in self.records():
            x[filled], y[filled] = self._row(name, number, record)
            filled += 1
            if filled == rows:
                yield x, y
                x, y, filled = np.empty((rows, width), np.float32), np.empty(rows, np.float32), 0
        if filled:
            yield x[:filled], y[:filled]

    def arrays(self, rows: int) -> tuple[Any, Any]:
        """The whole share as one (x, y) pair."""
        import numpy as np

        assert self.features is not None, "columns are set before reading"
        read = list(self.batches(rows))
        if not read:
            return np.empty((0, len(self.features)), np.float32), np.empty(0, np.float32)
        return np.concatenate([x for x, _ in read]), np.concatenate([y for _, y in read])

    def _dict(self, name: str, number: int, record: Any) -> dict[str, Any]:
        if not isinstance(record, dict):
            raise UsageError(
                "a record without named columns",
                source=name,
                path=f"record {number}",
                value=record,
                expected="a JSON object per line, or CSV with a header row",
            )
        return record

    def _row(self, name: str, number: int, record: Any) -> tuple[list[float], float]:
        record = self._dict(name, number, record)
        assert self.features is not None
        if record.get(self.label) in _MISSING:
            raise UsageError(
                f'no label: column "{self.label}" is absent or empty',
                source=name,
                path=f"record {number}",
                value=list(record),
                expected=f'a number in column "{self.label}" of every record',
                hint="pass label= the name of the target column",
            )
        try:
            return [_number(record.get(c)) for c in self.features], _number(record[self.label])
        except (TypeError, ValueError):
            pass
        for column in (self.label, *self.features):  # which one: the slow path, once
            try:
                _number(record.get(column))
            except (TypeError, ValueError):
                raise UsageError(
                    f'column "{column}" is not a number',
                    source=name,
                    path=f"record {number}",
                    value=record.get(column),
                    expected=_EXPECTED_NUMBER,
                    hint="encode categories and class names as numbers first"
                    if isinstance(record.get(column), str)
                    else None,
                ) from None
        raise AssertionError("a value failed once and then passed")  # pragma: no cover


def share_bytes(share: Share, environ: Mapping[str, str] | None = None) -> int:
    """The bytes of `share`'s files this reader keeps (its stride's part when shared by record)."""
    from vtrain.storage.location import split_gs_uri

    total, clients = 0, {}  # bucket name -> bucket
    for name in share.files:
        if name.startswith("gs://"):
            from vtrain.storage.gcs import storage_client

            bucket, key = split_gs_uri(name)
            if bucket not in clients:
                clients[bucket] = storage_client(environ).bucket(bucket)
            blob = clients[bucket].get_blob(key)
            if blob is None:
                raise StorageError("cannot size: not found", source=name)
            total += int(blob.size)
        else:
            try:
                total += os.path.getsize(name)
            except OSError as e:
                raise StorageError(f"cannot size: {e.strerror}", source=name) from e
    readers: int = share.record_shard[1]
    return total // readers


def _check(
    label: object, features: object, quantile: object, memory_budget: object, batch_rows: object
) -> None:
    if not isinstance(label, str) or not label:
        raise UsageError(
            "not a column name", source="dmatrix(label=)", value=label, expected="a str"
        )
    if features is not None and (
        isinstance(features, str)
        or not isinstance(features, Sequence)
        or not all(isinstance(f, str) and f for f in features)
        or len(set(features)) != len(features)
        or label in features
    ):
        raise UsageError(
            "not a list of feature columns",
            source="dmatrix(features=)",
            value=features,
            expected="distinct column names (str), the label not among them; or None for every "
            "column of the first record",
        )
    if not isinstance(quantile, bool):
        raise UsageError(
            "not a bool", source="dmatrix(quantile=)", value=quantile, expected="True or False"
        )
    counts = ((memory_budget, "memory_budget", 0), (batch_rows, "batch_rows", 1))
    for value, argument, least in counts:
        if value is None and argument == "memory_budget":
            continue  # the default budget
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise UsageError(
                "not a count",
                source=f"dmatrix({argument}=)",
                value=value,
                expected=f"an int >= {least}",
            )


def share_dmatrix(
    share: Share,
    *,
    label: str,
    features: Sequence[str] | None = None,
    format: str | None = None,
    quantile: bool = True,
    ref: Any = None,
    memory_budget: int | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    cache_dir: str | None = None,
    distributed: bool = False,
    environ: Mapping[str, str] | None = None,
    **dmatrix_options: Any,
) -> Any:
    """A `QuantileDMatrix` (or `DMatrix`) of `share`: in memory, or external when too large.

    `memory_budget` (bytes; default a quarter of the machine's memory) is compared
    with the largest share's files; above it the matrix is an
    `ExtMemQuantileDMatrix` (or a `DMatrix` over an iterator) cached under
    `cache_dir`. `distributed`: this process is in XGBoost's collective.
    """
    _check(label, features, quantile, memory_budget, batch_rows)
    import numpy as np
    import xgboost as xgb

    table = Table(share, label=label, features=features, format=format, environ=environ)
    if table.features is None:
        found = table.first_columns()
        if distributed:
            from xgboost import collective

            # Rank 0's columns for all: every trainer's matrix must have the same ones.
            found = collective.broadcast(found if collective.get_rank() == 0 else None, 0)
        if not found:
            raise UsageError(
                "no record to take the feature columns from",
                source=share.uri or share.split,
                value=list(share.files),
                expected="a share with records, or features= naming the columns",
            )
        table.features = tuple(found)
    budget = default_memory_budget() if memory_budget is None else memory_budget
    size = share_bytes(share, environ)
    if distributed:
        from xgboost import collective

        size = int(collective.allreduce(np.array([size], np.int64), collective.Op.MAX)[0])
    names = list(table.features)
    if size <= budget:
        x, y = table.arrays(batch_rows)
        if quantile:
            return xgb.QuantileDMatrix(x, label=y, ref=ref, feature_names=names, **dmatrix_options)
        return xgb.DMatrix(x, label=y, feature_names=names, **dmatrix_options)

    from vtrain_xgboost.batches import ShareBatches

    cache = tempfile.TemporaryDirectory(prefix="vtrain-xgboost-cache-", dir=cache_dir)
    batches = ShareBatches(table, batch_rows, os.path.join(cache.name, "cache"))
    matrix = (
        xgb.ExtMemQuantileDMatrix(batches, ref=ref, **dmatrix_options)
        if quantile
        else xgb.DMatrix(batches, **dmatrix_options)
    )
    # XGBoost's pages live in the folder: it goes when the matrix does.
    matrix.vtrain_cache = cache
    return matrix
