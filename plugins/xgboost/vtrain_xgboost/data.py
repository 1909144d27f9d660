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

import os
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from vtrain import StorageError, UsageError
from vtrain.data import Share
from vtrain_xgboost.table import Table

DEFAULT_BATCH_ROWS = 100_000
"""Records per batch on the external-memory path (one XGBoost page each)."""
_FALLBACK_BUDGET = 1 << 30


def default_memory_budget() -> int:
    """A quarter of this machine's memory, in bytes (1 GiB where it cannot be read)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (AttributeError, ValueError, OSError):
        return _FALLBACK_BUDGET


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

    `label` names the target column, `features` the others (default: the first
    record's); missing values read as NaN. Pass the training matrix as `ref=`
    for a validation split; `quantile=False` gives a plain DMatrix.
    `memory_budget` (bytes; default a quarter of the machine's memory) is compared
    with the largest share's files; above it the matrix is an
    `ExtMemQuantileDMatrix` (or a `DMatrix` over an iterator), read `batch_rows`
    records at a time and cached under `cache_dir`. `distributed`: this process
    is in XGBoost's collective. `dmatrix_options` go to XGBoost's matrix.
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
