"""Reading a run back: every attempt's records, in attempt order."""

from __future__ import annotations

from typing import Any

from vtrain.storage import Location, open_location
from vtrain.track.identity import attempt_file, attempts
from vtrain.track.records import parse


def read_run(folder: str | Location) -> list[dict[str, Any]]:
    """The records of the run in `folder` (its `tracking/` folder: a path, /gcs/ or gs://)."""
    location = open_location(folder) if isinstance(folder, str) else folder
    records: list[dict[str, Any]] = []
    for attempt in attempts(location.list()):
        records += parse(location.read_bytes(attempt_file(attempt)).splitlines())
    return records
