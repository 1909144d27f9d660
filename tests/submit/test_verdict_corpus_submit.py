"""The verdict corpus's scripts that need the submit extra (a Katib trial's document), run in
the session that installs it; tests/core/local/test_verdict_corpus.py runs the rest."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "core" / "local"))
from test_verdict_corpus import Case, cases, rehearse  # noqa: E402

THERE = [c for c in cases() if c.needs is not None and c.runnable]


@pytest.mark.parametrize("case", THERE, ids=lambda c: c.name)
def test_the_script_gets_exactly_its_findings(case: Case, tmp_path: Path) -> None:
    got = rehearse(case, tmp_path)
    assert got.found is not None, got.output
    assert sorted(got.found) == sorted(case.expect), got.output
