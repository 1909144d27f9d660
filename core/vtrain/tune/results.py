"""The state of a study: trial records, and ``<output>/study.json`` that holds them.

The runner rewrites study.json atomically after every change; run the same study
into the same folder again and it resumes from what the file recorded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from vtrain.errors import ConfigError, UsageError
from vtrain.hypertune.atomic import read_nofollow, write_atomic
from vtrain.tune.samplers import Parameters
from vtrain.tune.study import Study
from vtrain.tune.study_file import study_from_document

RESULTS_FILE = "study.json"
ACTIVE, SUCCEEDED, FAILED, STOPPED = "ACTIVE", "SUCCEEDED", "FAILED", "STOPPED"


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
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

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
    write_atomic(results_file, (json.dumps(document, indent=2) + "\n").encode())


def read_trials(results_file: str, study: Study) -> dict[str, Trial]:
    """The trials an earlier run of `study` recorded in study.json; {} when there is none."""
    data = read_nofollow(results_file)
    if data is None:
        return {}
    try:
        document = json.loads(data)
        trials = [Trial.from_dict(t) for t in document["trials"]]
        recorded = document["study"]
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(
            f"unreadable results of an earlier run: {e}",
            source=results_file,
            hint="move it away to start the study afresh",
        ) from e
    if study_from_document(recorded, source=results_file).search_space() != study.search_space():
        raise UsageError(
            "this folder holds a study with a different metric, search space or algorithm",
            source=results_file,
            hint="give another --output-dir, or delete this study.json to start over",
        )
    return {t.trial_id: t for t in trials}
