"""Which replicas read a split, and as which of how many readers.

Trainers share the training and test splits: rank r of n gets the r-th share,
unless the framework's plugin exported another place (VTRAIN_READER: MXNet's
workers, when the chief only schedules). A replica that does not train (a
parameter server, a Reduction Server) reads nothing. An evaluator reads the
validation split whole (it evaluates every checkpoint on all of it) and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.cluster import EVALUATOR, ClusterInfo
from vtrain.data.shares import check_place
from vtrain.errors import ConfigError, UsageError
from vtrain.variables import READER


def reader_place(
    info: ClusterInfo, environ: Mapping[str, str], split: str
) -> tuple[int, int] | None:
    """(rank, readers) of this replica for `split`; None when it reads nothing."""
    if info.role == EVALUATOR:
        return (0, 1) if split == "validation" else None
    exported = environ.get(READER)
    if exported:
        return _exported_place(exported)
    if info.rank is None:
        return None
    if info.process_rank is not None and info.process_count:
        # torchrun: every process trains on its own batches, so each needs its own share.
        return info.process_rank, info.process_count
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


def _exported_place(text: str) -> tuple[int, int]:
    rank, _, readers = text.partition("/")
    if rank.isdecimal() and readers.isdecimal() and int(rank) < int(readers):
        return int(rank), int(readers)
    raise ConfigError(
        "not a place among the readers",
        source=READER,
        value=text,
        expected="rank/readers with rank < readers (e.g. 1/2)",
        hint=f"a stale {READER} from another job? unset it",
    )
