"""What no process can be given is refused by the plan, before any folder or replica exists.

exec() refuses a NUL in an argument or a variable, and a variable name with "="
or none at all, with a ValueError; found there, it came after the job's banner
and folders. A rehearsed job's replica counts name the document's field.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from vtrain.errors import UsageError
from vtrain.local.plan import MAX_LOCAL_REPLICAS, Plan

PY = [sys.executable, "-c", "pass"]


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (
            {"command": [sys.executable, "-c", "a\0b"]},
            r"COMMAND: a NUL character \(\\0\) in an argument \(got 'a\\x00b'\)",
        ),
        (
            {"role_commands": {"worker": [sys.executable, "x\0"]}, "workers": 1},
            r"the worker pool's command: a NUL character",
        ),
        (
            {"role_env": {"chief": {"A=B": "1"}}},
            r"the chief pool's env: not a variable name \(got 'A=B'\)",
        ),
        ({"role_env": {"chief": {"": "1"}}}, r"the chief pool's env: not a variable name"),
        (
            {"role_env": {"chief": {"TOKEN": "hunter2\0"}}},
            r"the chief pool's env: a NUL character \(\\0\) in the value of TOKEN; expected",
        ),
        ({"output_dir": "out\0put"}, r"--output-dir: a NUL character \(\\0\) in a path"),
        (
            {"workers": MAX_LOCAL_REPLICAS},
            rf"--workers: too many replicas to rehearse on this machine \(got {{'worker': "
            rf"{MAX_LOCAL_REPLICAS}}}\); expected at most \d+ replicas in all, the chief included",
        ),
        (
            {"workers": 100_000, "sources": {"worker": "job.yaml: spec.x.Worker.replicas"}},
            r"^job.yaml: spec.x.Worker.replicas: too many replicas",
        ),
        (
            {"ps": -1, "sources": {"ps": "job.yaml: trainingInput.parameterServerCount"}},
            r"^job.yaml: trainingInput.parameterServerCount: a replica count cannot be negative",
        ),
    ],
)
def test_what_no_process_can_take_is_refused_up_front(
    tmp_path: Path, options: dict[str, Any], said: str
) -> None:
    options = {"command": PY, "output_dir": str(tmp_path / "out"), **options}
    with pytest.raises(UsageError, match=said) as caught:
        Plan.from_options(options.pop("command"), **options)
    assert "hunter2" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []
