"""The tags a replica reported to the tuning service, read from its metric file."""

from __future__ import annotations

from vtrain.hypertune.metric_file import RESERVED_KEYS, read_entries


def tags(path: str) -> set[str]:
    try:
        entries = read_entries(path)
    except OSError:
        return set()
    return {k for e in entries for k in e if k not in RESERVED_KEYS}
