"""A framework whose lone restarted replica cannot rejoin gets restartJobOnWorkerRestart by default.

The knowledge is the plugin's (`Plugin.job_restarts`), read through --framework,
never a framework named in render: MXNet's ps-lite says so, TensorFlow does not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Result

import vtrain

Run = Callable[..., Result]
JOB = ["--name", "j", "--image", "gcr.io/p/t:1", "--workers", "2", "--ps", "1"]
CMD = ["--format", "json", "--", "python", "t.py"]


def render(vtrain_cli: Run, *argv: str) -> tuple[dict[str, Any], str]:
    done = vtrain_cli("render", "vertex", *JOB, *argv, *CMD)
    assert done.status == 0, done.err
    return json.loads(done.out)["jobSpec"].get("scheduling", {}), done.err


def test_mxnet_jobs_restart_whole_and_render_says_why(vtrain: Run) -> None:
    scheduling, said = render(vtrain, "--framework", "mxnet")
    assert scheduling == {"restartJobOnWorkerRestart": True}
    reason = vtrain_plugins_reason("mxnet")
    assert f"vtrain: restartJobOnWorkerRestart set: {reason};" in said


@pytest.mark.parametrize("argv", [["--framework", "tensorflow"], []])
def test_other_jobs_keep_vertex_s_default_and_say_nothing(vtrain: Run, argv: list[str]) -> None:
    scheduling, said = render(vtrain, *argv)
    assert scheduling == {} and "restartJobOnWorkerRestart" not in said


def test_asked_for_it_is_set_without_a_note(vtrain: Run) -> None:
    args = ["--framework", "mxnet", "--restart-job-on-worker-restart"]
    scheduling, said = render(vtrain, *args)
    assert scheduling == {"restartJobOnWorkerRestart": True}
    assert "restartJobOnWorkerRestart" not in said


def vtrain_plugins_reason(name: str) -> str:
    reason = vtrain.plugins.get(name).job_restarts
    assert reason, f"the {name} plugin declares no reason"
    return str(reason)
