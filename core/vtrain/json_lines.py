"""Records as JSON Lines: one compact object a line, appended; a torn last line is skipped.

A run's records (`vtrain.track.records`) and a job's timeline (`vtrain.timeline.events`)
are both written this way, by processes that may be killed mid-write.
"""

from __future__ import annotations

import json

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any


def line(record: Mapping[str, Any], *, allow_nan: bool = True) -> bytes:
    """One record as its line."""
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan)
    return text.encode() + b"\n"


def parse(lines: Iterable[bytes], keeps: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """The objects of `lines` that `keeps` takes; a line that is not JSON (torn by a writer
    killed mid-write) is skipped."""
    found = []
    for raw in lines:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and keeps(record):
            found.append(record)
    return found
