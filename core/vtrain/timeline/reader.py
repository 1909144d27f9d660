"""Reading a job's timeline back from its folder: a path, /gcs/ or gs://."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vtrain.storage import Location, open_location
from vtrain.timeline.events import FOLDER, LAUNCHER_FILE, lanes, parse, replica_file
from vtrain.timeline.goodput import Goodput, goodput


@dataclass
class Job:
    """A job's timeline: each trainer's records by (replica, attempt), and the launcher's."""

    lanes: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    launcher: list[dict[str, Any]] = field(default_factory=list)

    @property
    def goodput(self) -> Goodput | None:
        """The job's goodput; None when no replica trained."""
        return goodput(self.lanes, self.launcher)


def read_job(folder: str | Location, environ: Mapping[str, str] | None = None) -> Job:
    """The timeline in job folder `folder` (its `timeline/`; empty where there is none)."""
    base = open_location(folder, environ=environ) if isinstance(folder, str) else folder
    location = base.join(FOLDER)
    try:
        names = location.list()
    except Exception:  # no timeline folder: a job that recorded nothing
        return Job()
    job = Job()
    for replica, attempt in lanes(names):
        data = location.read_bytes(replica_file(replica, attempt))
        job.lanes[(replica, attempt)] = parse(data.splitlines())
    if LAUNCHER_FILE in names:
        job.launcher = parse(location.read_bytes(LAUNCHER_FILE).splitlines())
    return job
