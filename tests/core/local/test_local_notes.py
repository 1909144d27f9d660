"""One voice: a program that runs a local job silences or redirects vtrain's notes with
`logging`; `vtrain local run` shows them under vtrain's prefix among the replicas' lines."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from local_procs import MARK

from vtrain.local import Plan, run_job
from vtrain.log import logger


@pytest.fixture
def console() -> Iterator[None]:
    """Not the CLI's console handler here: this module is a program of its own."""
    yield


@pytest.fixture(autouse=True)
def vtrain_level() -> Iterator[logging.Logger]:
    """The `vtrain` logger as vtrain sets it up (INFO, its stderr handler), reset after."""
    top = logger()
    level = top.level
    yield top
    top.setLevel(level)


def _job(tmp_path: Path, mark: str) -> tuple[int, str]:
    plan = Plan.from_options(
        [sys.executable, "-c", "print('hi')"], workers=1, output_dir=str(tmp_path / "job")
    )
    stream = io.StringIO()
    result = run_job(plan, stream=stream, environ={**os.environ, MARK: mark})
    return result.status, stream.getvalue()


def test_a_program_that_silences_vtrain_sees_no_note(
    tmp_path: Path, mark: str, vtrain_level: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    vtrain_level.setLevel(logging.ERROR)
    status, shown = _job(tmp_path, mark)
    assert status == 0, shown
    assert "chief-0 | hi" in shown.replace("  ", " ")  # the replicas' lines are the job's
    assert "vtrain  |" not in shown and "finished" not in shown, shown
    assert [r for r in caplog.records if r.name.startswith("vtrain")] == []


def test_a_handler_of_its_own_receives_the_notes(tmp_path: Path, mark: str) -> None:
    class Mine(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.said: list[tuple[str, str, str | None]] = []

        def emit(self, record: logging.LogRecord) -> None:
            replica = getattr(record, "vtrain_replica", None)
            self.said.append((record.name, record.getMessage(), replica))

    top, mine = logging.getLogger("vtrain"), Mine()
    top.addHandler(mine)
    try:
        status, shown = _job(tmp_path, mark)
    finally:
        top.removeHandler(mine)
    assert status == 0, shown
    assert {name for name, _, _ in mine.said} == {"vtrain.local"}
    assert mine.said[0][1].startswith("job ") and " (vertex) in " in mine.said[0][1]
    finished = [m for _, m, r in mine.said if r == "chief-0" and m.startswith("chief-0 finished")]
    assert finished, mine.said
    assert "vtrain  |" not in shown, shown  # the console is the CLI's, not the library's


def test_the_command_line_shows_the_notes_as_always(
    vtrain: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    done = vtrain("--workers", "1", "--", sys.executable, "-c", "print('hi')")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("vtrain   | job "), lines
    assert any(line.startswith("vtrain   | chief-0 finished") for line in lines), lines
    assert "job " not in done.stderr
    log = next((tmp_path / "vtrain-output" / "local").glob("*/replica-logs/chief-0.log"))
    assert "[vtrain] chief-0 finished" in log.read_text()
