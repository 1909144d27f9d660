"""`vtrain submit --job … --dry-run` says what the rehearsal of that document found, first:
the decision is made there. The record says what the verdict said: a job that failed is
not ready, a job rehearsed with --no-model says so, what was not rehearsed follows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Result
from targets import rehearsed_vertex

Run = Callable[..., Result]
RENDER = rehearsed_vertex("--machine-type", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:1")


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "vtrain", *args]


def run(argv: list[str], cwd: Path) -> str:
    """stdout and stderr as one stream, in the order they were written."""
    done = subprocess.run(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=90
    )
    return done.stdout


def rehearse(job: Path, script: str, *flags: str) -> str:
    (job.parent / "t.py").write_text(script)
    out = job.parent / "out"
    argv = ["local", "run", "--job", str(job), "--output-dir", str(out), *flags]
    return run(command(*argv, "--", sys.executable, "t.py"), job.parent)


def dry_run(job: Path) -> list[str]:
    text = run(command("submit", "vertex", "--job", str(job), "--dry-run"), job.parent)
    return text.splitlines()


def test_the_dry_run_shows_the_record_first(
    vtrain: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the children inherit it
    monkeypatch.setenv("NO_COLOR", "1")
    job = tmp_path / "job.json"
    job.write_text(vtrain("render", *RENDER).out)

    lines = dry_run(job)
    assert lines[0].startswith("vtrain: not rehearsed (`vtrain local run --job FILE"), lines
    assert "  workerPoolSpecs:" in lines[1:], lines  # then the document

    failed = rehearse(job, 'raise SystemExit("boom")\n')
    assert "verdict: not ready: 1 finding\n  [job] " in failed, failed
    lines = dry_run(job)
    assert lines[0].startswith("vtrain: rehearsed: not ready: 1 finding (20"), lines
    # Both replicas crash; whichever exit the supervisor saw first ended the job.
    assert re.match(r"  \[job\] (chief|worker)-0: the job failed: ", lines[1]), lines
    assert "its last line 'boom'" in lines[1], lines
    said = [line for line in lines if line.startswith("  not rehearsed: ")]
    assert [line.split(":")[1].strip() for line in said] == [
        "accelerators",
        "machine types and memory",
        "the network's speed",
        "GPU collectives (NCCL)",
    ], lines
    assert "NVIDIA_TESLA_T4:1 (workerpool0)" in said[0], said
    assert not any(line.startswith("vtrain: rehearsed") for line in lines[1:]), lines

    ready = rehearse(job, "print('evaluated')\n", "--no-model")
    assert "\nverdict: ready to submit\n" in ready, ready
    lines = dry_run(job)
    assert lines[0].startswith("vtrain: rehearsed: ready (20"), lines
    assert lines[0].endswith(", with --no-model)"), lines


def test_a_dry_run_of_flags_has_no_record_to_show(tmp_path: Path) -> None:
    # Without --job no document was rehearsed: nothing precedes the job. (The send path
    # says the record after the send: tests/submit/test_rehearsed.py.)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    argv = command("submit", *RENDER[:-4], "--project", "my-project", "--dry-run", *RENDER[-4:])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=90, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "rehearsed" not in done.stderr, done.stderr
