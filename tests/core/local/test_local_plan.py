"""Argument checks of `vtrain local run`: every bad argument is refused before anything starts."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vtrain.errors import ErrorList, UsageError
from vtrain.local import Kill, Plan

PY = [sys.executable, "-c", "pass"]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"workers": -1}, r"--workers: a replica count cannot be negative \(got -1\)"),
        ({"ps": -2}, r"--ps: a replica count cannot be negative \(got -2\)"),
        ({"evaluators": -1}, r"--evaluators: .*negative \(got -1\); expected 0 or more"),
        ({"max_restarts": -1}, r"--max-restarts: cannot be negative \(got -1\)"),
        ({"timeout": 0}, r"--timeout: must be positive \(got 0\)"),
        ({"grace": -1.0}, r"--grace: cannot be negative"),
        ({"platform": "sage"}, r"--platform: unknown platform \(got 'sage'\); expected vertex"),
        ({"platform": "torchrun", "ps": 1}, r"--ps/--evaluators: torchrun starts trainers only"),
        ({"use_chief": True}, r"--use-chief: .*\(got 'vertex'\); expected aiplatform"),
        ({"trial_id": "../x"}, r"--trial: trial id is not a plain folder name \(got '../x'\)"),
        ({"trial_id": "1", "platform": "torchrun"}, r"--trial: this platform has no trial id"),
        ({"job_id": "a/b"}, r"--job-id: job id is not a plain folder name \(got 'a/b'\)"),
        (
            {"kills": ["worker:0@1"]},
            r"--kill: no such replica \(got 'worker:0@1:KILL'\); "
            r"expected a worker index below 0",
        ),
        ({"workers": 2, "kills": ["worker:2@1"]}, r"--kill: no such replica .*job has 2 worker"),
        ({"kills": ["chief:1@1"]}, r"--kill: no such replica"),
        ({"kills": ["worker0@5"]}, r"--kill: not a kill \(got 'worker0@5'\); expected ROLE:INDEX"),
        ({"kills": ["boss:0@5"]}, r"--kill: unknown role \(got 'boss:0@5'\)"),
        ({"kills": ["chief:0@1.2.3"]}, r"--kill: the time is not a number"),
        ({"kills": ["chief:0@1:NOPE"]}, r"--kill: unknown signal \(got 'chief:0@1:NOPE'\)"),
    ],
)
def test_bad_option_is_refused(options: dict[str, Any], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        Plan.from_options(PY, **options)


@pytest.mark.parametrize(
    ("command", "match"),
    [
        ([], r"COMMAND: no command to run \(got \[\]\)"),
        (["--"], r"COMMAND: no command to run"),
        ([""], r"COMMAND: no command to run"),
        (["no-such-program-xyz"], r"COMMAND: not an executable .*\(got 'no-such-program-xyz'\)"),
        (["/"], r"COMMAND: not an executable file or a command on PATH \(got '/'\)"),
    ],
)
def test_bad_command_is_refused(command: list[str], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        Plan.from_options(command)


def test_output_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(UsageError, match=r"--output-dir: exists and is not a folder"):
        Plan.from_options(PY, output_dir=str(tmp_path / "f"))


def test_all_problems_are_reported_together() -> None:
    with pytest.raises(ErrorList) as info:
        Plan.from_options([], workers=-1, ps=-1, kills=["x"])
    assert len(info.value.errors) == 4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("worker:0@5", Kill("worker", 0, 5.0, signal.SIGKILL)),
        ("ps:1@2.5:TERM", Kill("ps", 1, 2.5, signal.SIGTERM)),
        ("chief:0@0:sigint", Kill("chief", 0, 0.0, signal.SIGINT)),
        ("evaluator:3@10:KILL", Kill("evaluator", 3, 10.0, signal.SIGKILL)),
    ],
)
def test_kill_is_parsed(text: str, expected: Kill) -> None:
    assert Kill.parse(text) == expected


def test_plan_defaults_and_replicas(tmp_path: Path) -> None:
    plan = Plan.from_options(
        ["--", *PY], workers=2, ps=1, evaluators=1, job_id="j1", kills=["worker:1@3", "ps:0@1"]
    )
    assert plan.command == tuple(PY)
    assert plan.max_restarts == 5 and not plan.restart_job
    assert plan.output_dir.endswith("/vtrain-output/local/j1")
    assert [k.seconds for k in plan.kills] == [1.0, 3.0]  # in firing order
    names = [r.name for r in plan.replicas([1, 2, 3, 4, 5])]
    assert names == ["chief-0", "worker-0", "worker-1", "ps-0", "evaluator-0"]
    assert plan.replicas([1, 2, 3, 4, 5])[2].address == "127.0.0.1:3"


def test_torchrun_restarts_the_whole_group() -> None:
    assert Plan.from_options(PY, platform="torchrun").restart_job


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--workers", "-1", "--", *PY], "--workers: a replica count cannot be negative"),
        (["--workers", "1", "--kill", "worker:1@1", "--", *PY], "--kill: no such replica"),
        (["--"], "COMMAND: no command to run"),
        ([], "COMMAND: no command to run"),
    ],
)
def test_cli_refuses_bad_arguments_before_starting(
    vtrain: Callable[..., subprocess.CompletedProcess[str]],
    tmp_path: Path,
    args: list[str],
    match: str,
) -> None:
    done = vtrain(*args)
    assert done.returncode == 2
    assert f"vtrain local: error: {match}" in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "vtrain-output").exists()  # nothing was started or created
