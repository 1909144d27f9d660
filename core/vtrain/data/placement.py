"""Which replicas read a split, and as which of how many readers.

Trainers share the training and test splits: rank r of n gets the r-th share.
A parameter server, a Reduction Server, MXNet's scheduler and servers read
nothing. An evaluator reads the validation split whole (it evaluates every
checkpoint on all of it) and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.cluster import EVALUATOR, WORKER, ClusterInfo
from vtrain.data.shares import check_place
from vtrain.errors import ConfigError, UsageError

# MXNet's kvstore roles, as the MXNet plugin exports them before the framework starts.
_DMLC_ROLE = "DMLC_ROLE"
_DMLC_WORKERS = "DMLC_NUM_WORKER"
_DMLC_SERVICES = ("scheduler", "server")


def reader_place(
    info: ClusterInfo, environ: Mapping[str, str], split: str
) -> tuple[int, int] | None:
    """(rank, readers) of this replica for `split`; None when it reads nothing."""
    if info.role == EVALUATOR:
        return (0, 1) if split == "validation" else None
    dmlc_role = environ.get(_DMLC_ROLE)
    if dmlc_role in _DMLC_SERVICES:
        return None
    if info.rank is None:
        return None
    if info.process_rank is not None and info.process_count:
        # torchrun: every process trains on its own batches, so each needs its own share.
        return info.process_rank, info.process_count
    if dmlc_role == "worker" and environ.get(_DMLC_WORKERS):
        return _mxnet_place(info, environ[_DMLC_WORKERS])
    return info.rank, info.num_trainers


def choose_place(
    split: str, rank: int | None, world_size: int | None, environ: Mapping[str, str]
) -> tuple[int, int] | None:
    """`rank` and `world_size` when both are given; else this replica's place in the cluster."""
    if rank is None and world_size is None:
        return reader_place(ClusterInfo.from_env(environ), environ, split)
    if rank is None or world_size is None:
        given, missing = ("rank", "world_size") if world_size is None else ("world_size", "rank")
        raise UsageError(
            f"{given} is given but {missing} is not",
            source=missing,
            value=None,
            expected="both, or neither (the cluster's trainers then decide)",
        )
    return check_place(rank, world_size)


def _mxnet_place(info: ClusterInfo, text: str) -> tuple[int, int]:
    # Under the documented mapping the chief is the scheduler and only the workers train;
    # with `chief_trains` the chief trains too. DMLC_NUM_WORKER says which.
    workers = len(info.cluster.get(WORKER, ()))
    count = int(text) if text.isdigit() else -1
    assert info.rank is not None
    if count == info.num_trainers:
        return info.rank, count
    if count == workers and info.role == WORKER:
        return info.index, count
    raise ConfigError(
        "does not match the cluster's trainers",
        source=_DMLC_WORKERS,
        value=text,
        expected=f"{workers} (the workers) or {info.num_trainers} (the chief and the workers)",
    )
