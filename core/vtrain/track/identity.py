"""Which run a job's tracking goes to, and which attempt of it this process is (pure).

One run per job, and one per trial of a study: its name comes from what the
platform gives (the job id, the trial id), or the local job's id, so a restarted,
preempted or resumed leader reopens the same run. Each start of the leader is an
attempt of the run; attempt k writes `attempt-<k>.jsonl`, a file of its own, since an
object store appends to nothing.
"""

from __future__ import annotations

import re

from vtrain.errors import ConfigError

RUN_VARIABLE = "VTRAIN_TRACK_RUN"
"""A run's name given outright: `vtrain tune` names each trial's (a study's rerun reuses it)."""
_ATTEMPT = re.compile(r"attempt-(\d{1,9})\.jsonl")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def run_name(job_id: str | None, trial_id: str | None, fallback: str) -> str:
    """The run's name: the job's id (else `fallback`, a local run's), and the trial's."""
    base = _UNSAFE.sub("-", job_id or fallback).strip("-") or "run"
    return base if trial_id is None else f"{base}-trial-{trial_id}"


def attempt_file(attempt: int) -> str:
    """The file attempt `attempt` (1, 2, …) writes its records to."""
    return f"attempt-{attempt}.jsonl"


def attempts(names: list[str]) -> list[int]:
    """The attempts whose files are among `names` (a folder's listing), in order."""
    return sorted(int(m[1]) for n in names if (m := _ATTEMPT.fullmatch(n)))


def next_attempt(names: list[str]) -> int:
    """The attempt a new start of the leader is, given the run folder's listing `names`."""
    found = attempts(names)
    return (found[-1] if found else 0) + 1


def run_folder(model_dir: str, run: str, variable: str = "AIP_MODEL_DIR") -> str:
    """Where run `run` is kept: ``tracking/<run>/`` beside the model folder `model_dir`
    (a path, /gcs/ or gs://), so that the jobs that share a parent keep runs apart."""
    trimmed = model_dir.rstrip("/")
    parent, _, last = trimmed.rpartition("/")
    rooted = trimmed.startswith("/") or trimmed.startswith("gs://")
    if not last or (rooted and parent in ("", "gs:/", "/gcs")) or trimmed.endswith(":"):
        raise ConfigError(
            "the model folder has no parent to keep the run beside it",
            source=variable,
            value=model_dir,
            expected="a folder below a bucket or a disk's root, e.g. gs://BUCKET/JOB/model/",
        )
    base = parent if parent else "."
    return f"{base}/tracking/{run}"
