"""No silent stall: when no replica has printed for --quiet-after, one line per replica says so."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from vtrain.errors import UsageError
from vtrain.local import Plan

# Each replica says where it is, then hangs silently (as in a collective's C code), then ends.
SILENT = """\
import sys, time
import vtrain

info = vtrain.ClusterInfo.from_env()
print(f"vtrain: waiting for the tracker at 127.0.0.1:9 ({info.role})", flush=True)
time.sleep(float(sys.argv[1]))
"""


def test_a_silent_job_is_said_to_be_silent_replica_by_replica(
    vtrain: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    script = tmp_path / "silent.py"
    script.write_text(SILENT)
    argv = ["--output-dir", str(tmp_path / "out"), "--workers", "1", "--quiet-after", "1.5"]
    done = vtrain(*argv, "--", sys.executable, str(script), "4")
    assert done.returncode == 0, done.stdout + done.stderr
    line = r"^vtrain +\| (\S+): silent for (\d+) s, running for \d+ s; its last line: (.*)$"
    said = re.findall(line, done.stdout, re.M)
    assert {name for name, _, _ in said} == {"chief-0", "worker-0"}, done.stdout
    for name, seconds, last in said:
        assert int(seconds) >= 1
        assert last == f"vtrain: waiting for the tracker at 127.0.0.1:9 ({name.split('-')[0]})"
    # Once per stretch of silence, not once per loop: 4 s of it at 1.5 s is 2 lines each at most.
    assert len(said) <= 4


def test_a_job_that_talks_is_never_said_to_be_silent(
    vtrain: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    script = tmp_path / "silent.py"
    script.write_text(SILENT)
    done = vtrain("--output-dir", str(tmp_path / "out"), "--", sys.executable, str(script), "0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "silent for" not in done.stdout


@pytest.mark.parametrize("value", [0.0, -1.0, float("nan")])
def test_quiet_after_must_be_a_positive_time(value: float) -> None:
    with pytest.raises(UsageError, match=r"--quiet-after.*seconds > 0"):
        Plan.from_options(["python", "t.py"], quiet_after=value)
