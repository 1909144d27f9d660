"""`progress`: how far a global position is in its epoch, for a resume's log line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vtrain.data.stream_position import check_kind, count_of, shown
from vtrain.errors import UsageError
from vtrain.frozen import Frozen


class Progress(Frozen):
    """How far a global position is in its epoch: for a resume's log line."""

    __slots__ = ("epoch", "world_size", "read", "left")
    epoch: int
    world_size: int
    """How many replicas the position was taken from."""
    read: int
    """Records given out in the epoch before the position."""
    left: int | None
    """Records still due in the epoch; None until every file has been read to its end once
    (lines for JSON Lines, where blank lines count too)."""

    def __init__(self, epoch: int, world_size: int, read: int, left: int | None) -> None:
        self._init_from(locals())


def progress(position: Mapping[str, Any]) -> Progress:
    """How far a global position (from `merge_states`) is in its epoch, for a log line."""
    check_kind(position, "position")
    replicas = position.get("replicas")
    counts = position.get("counts")
    source = position.get("source")
    files = source.get("files") if isinstance(source, Mapping) else None
    if not isinstance(replicas, (list, tuple)) or not isinstance(counts, Mapping) or not files:
        raise UsageError(
            "not a global position",
            source="position",
            value=shown(position),
            expected="what vtrain.data.merge_states() returns",
        )

    def number(value: object, path: str) -> int:
        return count_of(value, path, where="position")

    replica_reads = (
        number(r.get("read") if isinstance(r, Mapping) else None, f"replicas[{i}].read")
        for i, r in enumerate(replicas)
    )
    read = number(position.get("before"), "before") + sum(replica_reads)
    known = sum(counts.values()) if len(counts) == len(files) else None
    return Progress(
        number(position.get("epoch"), "epoch"),
        len(replicas),
        read,
        None if known is None else max(known - read, 0),
    )
