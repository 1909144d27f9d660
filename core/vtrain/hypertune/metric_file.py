"""The metric file the tuning service reads: JSON lines, one object per report.

Each line has the keys `checkpoint_path`, `global_step`, the metric's tag,
`timestamp` and `trial`, sorted; every value is a string except `timestamp`
(a float). The writer keeps the last 100 lines. This is the format
cloudml-hypertune 0.1.0.dev6 writes, byte for byte.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from vtrain.storage.atomic import read_nofollow

MAX_ENTRIES = 100
RESERVED_KEYS = frozenset({"checkpoint_path", "global_step", "timestamp", "trial"})

Entry = Mapping[str, str | float]


def make_entry(
    *, tag: str, value: float, trial: str, step: int | None, checkpoint_path: str, timestamp: float
) -> dict[str, str | float]:
    """One report, with the types and defaults cloudml-hypertune uses."""
    return {
        "checkpoint_path": checkpoint_path,
        "global_step": str(int(step) if step else 0),
        tag: str(float(value)),
        "timestamp": timestamp,
        "trial": trial,
    }


def encode(entry: Entry) -> str:
    """One line of the file, newline included."""
    return json.dumps(entry, sort_keys=True) + "\n"


def decode(data: bytes) -> list[dict[str, str | float]]:
    """The entries in a file's bytes; lines that are not JSON objects are skipped.

    cloudml-hypertune truncates and rewrites the file in place, so a file it was
    writing when its process died can end in a torn line.
    """
    entries = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def read_entries(path: str) -> list[dict[str, str | float]]:
    """The entries of the metric file at `path` (empty when there is none); refuses symlinks."""
    data = read_nofollow(path)
    return [] if data is None else decode(data)


def metric_values(entries: list[dict[str, str | float]], tag: str) -> list[float]:
    """The values reported under `tag`, oldest first; unreadable values are skipped.

    NaN and infinities are kept (a number beyond float's range reads as one): another
    writer may have put them there, and the reader decides what a trial that did is worth.
    """
    values = []
    for entry in entries:
        value = entry.get(tag)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue  # absent, or a list, an object, null, true
        if isinstance(value, str) and not value.isascii():
            continue  # float() takes '١٫٥' too
        try:
            values.append(float(value))
        except OverflowError:  # an int beyond float's range
            values.append(math.inf if int(value) > 0 else -math.inf)
        except ValueError:
            continue
    return values
