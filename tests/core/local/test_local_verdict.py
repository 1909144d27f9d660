"""The rehearsal's verdict: each check flags a script that breaks its rule, and only that one.

One script (verdict_scripts/rules.py) runs as a chief and a worker on separate
disks and addresses; in mode `keep` it follows every rule, in each other mode it
breaks exactly the rule of the check named like the mode. Every run kills the
chief once (--kill chief:0), so that `resume` is rehearsed too.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vtrain.local.verdict import CHECKS, Finding, Verdict

RULES = str(Path(__file__).parent / "verdict_scripts" / "rules.py")
Run = Callable[..., subprocess.CompletedProcess[str]]


def rehearse(vtrain: Run, tmp_path: Path, mode: str) -> tuple[dict[str, Any], str]:
    verdict = tmp_path / "verdict.json"
    done = vtrain(
        "--workers",
        "1",
        "--output-dir",
        str(tmp_path / "out"),
        "--kill",
        "chief:0@2",
        "--max-restarts",
        "1",
        "--verdict-json",
        str(verdict),
        "--",
        sys.executable,
        RULES,
        mode,
        "--epochs",
        "2",
        CLOUD_ML_HP_METRIC_TAG="accuracy",
    )
    assert "verdict: " in done.stdout, done.stdout + done.stderr
    return json.loads(verdict.read_text()), done.stdout


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    """The verdict on the script that keeps every rule (one run for every check's test)."""
    import os
    import uuid

    from local_procs import MARK, VTRAIN

    tmp = tmp_path_factory.mktemp("keep")
    done = subprocess.run(
        [
            *VTRAIN,
            "--workers",
            "1",
            "--output-dir",
            str(tmp / "out"),
            "--kill",
            "chief:0@2",
            "--max-restarts",
            "1",
            "--verdict-json",
            str(tmp / "verdict.json"),
            "--",
            sys.executable,
            RULES,
            "keep",
            "--epochs",
            "2",
        ],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, MARK: uuid.uuid4().hex, "CLOUD_ML_HP_METRIC_TAG": "accuracy"},
    )
    return json.loads((tmp / "verdict.json").read_text()), done.stdout


@pytest.mark.parametrize("check", CHECKS)
def test_a_job_that_keeps_the_rule_is_not_flagged(
    check: str, kept: tuple[dict[str, Any], str]
) -> None:
    verdict, stdout = kept
    assert [f for f in verdict["findings"] if f["check"] == check] == [], stdout
    assert verdict["ready"] is True, stdout
    # The verdict comes last, then what no rehearsal on one machine reproduces.
    tail = stdout[stdout.rindex("\nverdict: ") :].splitlines()[1:]
    assert tail[0] == "verdict: ready to submit", stdout
    assert all(line.startswith("  not rehearsed: ") for line in tail[1:]), stdout


WHAT = {
    "local-disk": r"could not find data\.bin, which chief-0 wrote on its own disk",
    "loopback": r"listened on 127\.0\.0\.1:\d+, not on its cluster address 127\.0\.0\.2",
    "leader": r"model\.bin, which chief-0 wrote too",
    "metric": r"'accuracy' was never reported \(tags seen: loss\)",
    "resume": r"restarted after --kill chief:0@2:KILL and committed step 1 although step 5",
    "args": r"refused its arguments \(.*unrecognized arguments: --epochs 2\)",
}
# Both replicas refuse the arguments in mode `args`; whichever exits first is
# the one named (the job stops at the first refusal), so either is right.
WHO = {
    "local-disk": {"worker-0"},
    "loopback": {"chief-0"},
    "leader": {"worker-0"},
    "metric": {"chief-0"},
    "resume": {"chief-0"},
    "args": {"chief-0", "worker-0"},
}


# `job` and `kill` are about how the job ran, not what the script does in a mode: their
# rehearsals are tests/core/local/test_verdict_outcome.py's. `storage` needs a gs:// output:
# tests/core/local/test_local_gcs.py's.
BROKEN = tuple(check for check in CHECKS if check not in ("job", "kill", "storage"))


@pytest.mark.parametrize("check", BROKEN)
def test_a_job_that_breaks_the_rule_is_flagged(check: str, vtrain: Run, tmp_path: Path) -> None:
    import re

    verdict, stdout = rehearse(vtrain, tmp_path, check)
    assert verdict["ready"] is False, stdout
    mine = [f for f in verdict["findings"] if f["check"] == check]
    assert mine, stdout
    who = mine[0]["replica"]
    assert who in WHO[check], stdout
    assert re.search(WHAT[check], mine[0]["detail"]), mine
    n = len(verdict["findings"])
    assert f"verdict: not ready: {n} finding" in stdout
    assert f"  [{check}] {who}: " in stdout


def test_the_verdict_reads_as_documented() -> None:
    finding = Finding("leader", "worker-0", "wrote model/m.pt, which chief-0 wrote too", "fix it")
    assert Verdict(()).text() == "verdict: ready to submit\n"
    assert Verdict((finding,), ("a note",)).text() == (
        "verdict: not ready: 1 finding\n"
        "  [leader] worker-0: wrote model/m.pt, which chief-0 wrote too; fix it\n"
        "  (note: a note)\n"
    )
    assert json.loads(Verdict((finding,)).to_json()) == {
        "ready": False,
        "findings": [
            {
                "check": "leader",
                "replica": "worker-0",
                "detail": "wrote model/m.pt, which chief-0 wrote too; fix it",
            }
        ],
        "notes": [],
        "not_checked": [],
        "not_rehearsed": [],
    }


def test_the_readme_rehearsal_catches_the_bug_then_passes_the_fix(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[3] / "tests"))
    from readme_blocks import blocks, check_clean_run, run_block

    # The first block that writes save.py: the classic bug (the gs:// rehearsal's comes later).
    block = next(b for b in blocks() if "> save.py" in b.text)
    output = check_clean_run(block, run_block(block, tmp_path, timeout=120))
    caught = re.search(
        r"^verdict: not ready: 1 finding\n  \[leader\] worker-0: wrote \S+/model/model\.txt, "
        r"which chief-0 wrote too: ",
        output,
        re.MULTILINE,
    )
    assert caught, output
    assert output[caught.end() :].count("\nverdict: ready to submit\n") == 1, output
