"""The state of a study: trial records, and ``<output>/study.json`` that holds them.

The runner rewrites study.json atomically after every change; run the same study
into the same folder again and it resumes from what the file recorded. It holds the
command (its --password=… too), so it is this user's only (mode 0600).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from vtrain.errors import ConfigError, UsageError
from vtrain.storage.atomic import read_nofollow, write_atomic
from vtrain.tune.samplers import Parameters
from vtrain.tune.study import Study
from vtrain.tune.study_file import study_from_document

RESULTS_FILE = "study.json"
ACTIVE, SUCCEEDED, FAILED, STOPPED = "ACTIVE", "SUCCEEDED", "FAILED", "STOPPED"
INFEASIBLE = "INFEASIBLE"
"""Ran to the end but reported a NaN or infinite metric, as Vertex's Trial.State names it.

It has no final metric, so it is never the best trial, and it does not count as failed.
"""


@dataclass(frozen=True)
class Trial:
    """One trial's record, as kept in study.json."""

    trial_id: str
    parameters: Parameters
    status: str
    final_metric: float | None = None
    exit_code: int | None = None
    started_at: float | None = None
    """Wall-clock start, seconds since the epoch."""
    duration_s: float | None = None
    reason: str = ""

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trial:
        """Read one record back from study.json."""
        trial = cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})
        metric = trial.final_metric
        # An earlier vtrain recorded a NaN metric as a success (and wrote a bare NaN): no more.
        if isinstance(metric, float) and not math.isfinite(metric):
            status = INFEASIBLE if trial.status == SUCCEEDED else trial.status
            reason = trial.reason or f"reported {metric!r}, which is not a finite number"
            trial = replace(trial, final_metric=None, status=status, reason=reason)
        return trial

    @property
    def number(self) -> int:
        """The trial id as a number: the sampler's index."""
        return int(self.trial_id)


@dataclass(frozen=True)
class StudyResult:
    """How a study ended: every trial, the best one, and where the results file is."""

    status: str
    trials: tuple[Trial, ...]
    best: Trial | None
    results_file: str
    reason: str = ""


def write_results(
    results_file: str,
    *,
    study: Study,
    command: Sequence[str],
    seed: int,
    replicas: Mapping[str, int],
    output_dir: str,
    status: str,
    reason: str,
    trials: Sequence[Trial],
    best: Trial | None,
) -> None:
    """Rewrite study.json: the study, how it is run, and every trial so far."""
    document = {
        "study": study.to_dict(),
        "study_file": study.source,
        "command": list(command),
        "seed": seed,
        "replicas": dict(replicas),
        "output_dir": output_dir,
        "status": status,
        "reason": reason,
        "best_trial": None if best is None else best.trial_id,
        "trials": [asdict(t) for t in trials],
    }
    # allow_nan=False: a bare NaN is not JSON, and no other reader of study.json would take it.
    text = json.dumps(document, indent=2, allow_nan=False)
    write_atomic(results_file, (text + "\n").encode(), private=True)


@dataclass(frozen=True)
class Recorded:
    """What study.json says of an earlier run: its study, how it was run, and its trials."""

    study: Study
    command: tuple[str, ...] | None
    """None in a file an early vtrain wrote, which did not record it."""
    replicas: Mapping[str, int]
    seed: int
    trials: Mapping[str, Trial]


def read_recorded(results_file: str) -> Recorded | None:
    """The study an earlier run recorded in study.json; None when there is none."""
    data = read_nofollow(results_file)
    if data is None:
        return None
    try:
        document = json.loads(data)
        trials = [Trial.from_dict(t) for t in document["trials"]]
        for t in trials:
            json.dumps(t.parameters, allow_nan=False)  # ValueError for a NaN parameter
        command = document.get("command")
        replicas, seed = document.get("replicas", {}), document.get("seed", 0)
        if command is not None and not (
            isinstance(command, list) and all(isinstance(a, str) for a in command)
        ):
            raise TypeError(f"command is not a list of strings: {command!r}")
        if not (isinstance(replicas, dict) and all(type(n) is int for n in replicas.values())):
            raise TypeError(f"replicas is not a mapping of counts: {replicas!r}")
        if type(seed) is not int:
            raise TypeError(f"seed is not an integer: {seed!r}")
        recorded = document["study"]
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        raise ConfigError(
            f"unreadable results of an earlier run: {e}",
            source=results_file,
            hint="move it away to start the study afresh",
        ) from e
    return Recorded(
        study=study_from_document(recorded, source=results_file),
        command=None if command is None else tuple(command),
        replicas=dict(replicas),
        seed=seed,
        trials={t.trial_id: t for t in trials},
    )


def read_trials(results_file: str, study: Study) -> dict[str, Trial]:
    """The trials an earlier run of `study` recorded in study.json; {} when there is none."""
    recorded = read_recorded(results_file)
    if recorded is None:
        return {}
    if recorded.study.search_space() != study.search_space():
        raise UsageError(
            "this folder holds a study with a different metric, search space or algorithm",
            source=results_file,
            hint="give another --output-dir, or delete this study.json to start over",
        )
    return dict(recorded.trials)
