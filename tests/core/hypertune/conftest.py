"""Helpers for the hypertune tests: study files, a tiny trial script, `vtrain tune` in-process."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vtrain.cli import main

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
        "parameters": [{"parameter_id": "x", "double_value_spec": {"min_value": 0, "max_value": 1}}],
        "algorithm": "RANDOM_SEARCH",
        "max_trial_count": 4,
    }
    document.update(fields)
    return document


@pytest.fixture
def tune(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Tune:
    """Run `vtrain tune` on a study dict (written as JSON) with the objective script."""
    records = tmp_path / "records"
    records.mkdir()

    def run(
        document: dict[str, Any], *script_args: str, cli: tuple[str, ...] = (), name: str = "study"
    ) -> TuneRun:
        study_file = tmp_path / f"{name}.json"
        study_file.write_text(json.dumps(document))
        output = tmp_path / f"{name}-out"
        argv = ["tune", "--study", str(study_file), "--output-dir", str(output), *cli, "--",
                sys.executable, OBJECTIVE, "--records", str(records), *script_args]  # fmt: skip
        status = main(argv)
        captured = capsys.readouterr()
        return TuneRun(status, captured.out, captured.err, output, records)

    return run
