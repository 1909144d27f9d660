"""The `tune` fixture: `vtrain tune` in-process on a study document and the objective script."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tune_helpers import OBJECTIVE, Tune, TuneRun

from vtrain.cli import main


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
        argv = [
            "tune",
            "--study",
            str(study_file),
            "--output-dir",
            str(output),
            *cli,
            "--",
            sys.executable,
            OBJECTIVE,
            "--records",
            str(records),
            *script_args,
        ]
        status = main(argv)
        captured = capsys.readouterr()
        return TuneRun(status, captured.out, captured.err, output, records)

    return run
