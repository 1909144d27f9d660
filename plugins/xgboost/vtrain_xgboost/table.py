"""`Table`: a share's JSON Lines or CSV records as float32 (features, label) arrays.

Missing values (null, an empty field, an absent column) read as NaN; any other
value that is no number fails with the file, the record and the column named.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Iterator, Mapping, Sequence
from typing import Any

from vtrain import UsageError
from vtrain.data import Share, check_format, format_of, read_share

_MISSING = (None, "")
_EXPECTED_NUMBER = "a number (null, an empty field or an absent column reads as missing)"


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
        return columns_of(name, number, record)

    def _row(self, name: str, number: int, record: Any) -> tuple[list[float], float]:
        assert self.features is not None
        return row_of(name, number, record, self.label, self.features)


def columns_of(name: str, number: int, record: Any) -> dict[str, Any]:
    """`record` (record `number` of `name`) as a dict of columns; a UsageError if it has none."""
    if not isinstance(record, dict):
        raise UsageError(
            "a record without named columns",
            source=name,
            path=f"record {number}",
            value=record,
            expected="a JSON object per line, or CSV with a header row",
        )
    return record


def row_of(
    name: str, number: int, record: Any, label: str, features: Sequence[str]
) -> tuple[list[float], float]:
    """(features, label) of one record, as floats; a UsageError naming the first bad column."""
    record = columns_of(name, number, record)
    if record.get(label) in _MISSING:
        raise UsageError(
            f'no label: column "{label}" is absent or empty',
            source=name,
            path=f"record {number}",
            value=list(record),
            expected=f'a number in column "{label}" of every record',
            hint="pass label= the name of the target column",
        )
    try:
        return [_number(record.get(c)) for c in features], _number(record[label])
    except (TypeError, ValueError):
        pass
    for column in (label, *features):  # which one: the slow path, once
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
