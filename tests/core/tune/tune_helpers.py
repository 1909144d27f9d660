"""Helpers for the `vtrain tune` tests: study documents, the tiny trial script, what a run left."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

OBJECTIVE = str(Path(__file__).parent / "scripts" / "objective.py")

Tune = Callable[..., "TuneRun"]


class TuneRun:
    """What one `vtrain tune` left behind: exit status, output, results, trial records."""

    def __init__(self, status: int, out: str, err: str, output_dir: Path, records: Path) -> None:
        self.status, self.out, self.err = status, out, err
        self.output_dir, self.records_dir = output_dir, records
        results = output_dir / "study.json"
        self.results: dict[str, Any] = json.loads(results.read_text()) if results.exists() else {}

    @property
    def trials(self) -> list[dict[str, Any]]:
        return list(self.results.get("trials", []))

    def records(self) -> list[dict[str, Any]]:
        """One record per trial process that reported, in no particular order."""
        return [json.loads(p.read_text()) for p in self.records_dir.glob("*.json")]


def study(**fields: Any) -> dict[str, Any]:
    """A study document maximising `score` over x in [0, 1], with `fields` on top."""
    document: dict[str, Any] = {
        "metrics": [{"metric_id": "score", "goal": "MAXIMIZE"}],
        "parameters": [
            {"parameter_id": "x", "double_value_spec": {"min_value": 0, "max_value": 1}}
        ],
        "algorithm": "RANDOM_SEARCH",
        "max_trial_count": 4,
    }
    document.update(fields)
    return document
