"""What a report shows, read from a job's (or a study's) folder: a path, /gcs/ or gs://.

A job's folder holds its timeline (`timeline/`), its tracked runs (`tracking/`), its
tuning metric files (`hypertune/`), its verdict (`verdict.json`, a rehearsal's) and
its replicas' logs (`replica-logs/`, a rehearsal's). A study's holds `study.json`
and a folder per trial. What a folder lacks is left out of the report, and said.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vtrain.storage import Location, open_location
from vtrain.timeline.reader import Job, read_job

LOG_LINES = 20
"""The last lines of each replica's log a failed job's report shows."""


@dataclass
class JobData:
    """Everything a job's report draws."""

    name: str
    uri: str
    timeline: Job
    series: dict[str, list[tuple[int, float, int]]] = field(default_factory=dict)
    """Each metric's (step, value, attempt): the tracked runs', then the tuning metric's."""
    verdict: dict[str, Any] | None = None
    logs: dict[str, list[str]] = field(default_factory=dict)
    """A failed job's replicas' last lines."""
    failed: bool = False


@dataclass
class StudyData:
    """Everything a study's report draws."""

    name: str
    uri: str
    study: dict[str, Any]


def gather(folder: str, environ: Mapping[str, str] | None = None) -> JobData | StudyData:
    """What `folder`'s report shows: a study's, where it holds study.json, else a job's."""
    location = open_location(folder, environ=environ)
    name = location.uri.rstrip("/").rpartition("/")[2] or location.uri
    names = _names(location)
    if "study.json" in names:
        study = json.loads(location.read_bytes("study.json"))
        return StudyData(name, location.uri, study)
    job = JobData(name, location.uri, read_job(location))
    job.series = _tracked(location) | _tuning(location)
    if "verdict.json" in names:
        job.verdict = json.loads(location.read_bytes("verdict.json"))
    ends = [r for r in job.timeline.launcher if r["e"] == "job_end"]
    job.failed = bool(ends) and ends[-1].get("status") != 0
    if job.failed or (job.verdict is not None and not job.verdict.get("ready")):
        job.logs = _logs(location)
    return job


def _names(location: Location) -> list[str]:
    try:
        return location.list()
    except Exception:  # a folder that is not there: nothing in it
        return []


def _tracked(location: Location) -> dict[str, list[tuple[int, float, int]]]:
    """Every metric of the runs in `tracking/`, with the attempt that logged each value."""
    from vtrain.track import read_run, series

    found: dict[str, list[tuple[int, float, int]]] = {}
    tracking = location.join("tracking")
    for run in _names(tracking):
        for name, values in series(read_run(tracking.join(run))).items():
            found.setdefault(name, []).extend(values)
    return found


def _tuning(location: Location) -> dict[str, list[tuple[int, float, int]]]:
    """The tuning metric each replica reported (`hypertune/`), at the step it gave."""
    from vtrain.hypertune.metric_file import RESERVED_KEYS, decode

    found: dict[str, list[tuple[int, float, int]]] = {}
    folder = location.join("hypertune")
    for file in _names(folder):
        for entry in decode(folder.read_bytes(file)):
            step = int(float(entry.get("global_step", 0) or 0))
            for key, value in entry.items():
                if key in RESERVED_KEYS:
                    continue
                try:
                    found.setdefault(f"{key} (tuning)", []).append((step, float(value), 0))
                except (TypeError, ValueError):
                    continue
    return found


def _logs(location: Location) -> dict[str, list[str]]:
    folder = location.join("replica-logs")
    found = {}
    for file in sorted(_names(folder)):
        if file.endswith(".log"):
            text = folder.read_bytes(file).decode(errors="replace")
            found[file.removesuffix(".log")] = text.splitlines()[-LOG_LINES:]
    return found
