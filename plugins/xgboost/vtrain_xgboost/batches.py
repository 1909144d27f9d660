"""`ShareBatches`: XGBoost's external-memory iterator over a share. Imports XGBoost: load lazily."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import xgboost as xgb

from vtrain_xgboost.table import Table


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
        return True
