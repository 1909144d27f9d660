"""--spot and --flex-start [--max-wait]: Vertex's scheduling strategy (the enum read from the
aiplatform v1 discovery document), sent as rendered, rehearsed with the reclaim it implies."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Result, VertexServer

from vtrain.submit import sdk

Run = Callable[..., Result]
IMAGE = ["--image", "gcr.io/p/t:1"]
CMD = ["--", "python", "t.py"]


def scheduling(vtrain: Run, *argv: str) -> dict[str, Any]:
    done = vtrain("render", "vertex", "--name", "j", *IMAGE, *argv, "--format", "json", *CMD)
    assert done.status == 0, done.err
    found: dict[str, Any] = json.loads(done.out)["jobSpec"].get("scheduling", {})
    return found


def test_the_strategies_come_from_the_discovery_document() -> None:
    schema = sdk.aiplatform_v1_schemas()["GoogleCloudAiplatformV1Scheduling"]
    assert {"SPOT", "FLEX_START"} <= set(schema["properties"]["strategy"]["enum"])
    assert "maxWaitDuration" in schema["properties"]


def test_spot_and_flex_start_render_vertex_s_strategy(vtrain: Run) -> None:
    from google.cloud import aiplatform_v1

    assert scheduling(vtrain, "--spot") == {"strategy": "SPOT"}
    flex = scheduling(vtrain, "--flex-start", "--max-wait", "2h", "--timeout", "30m")
    assert flex == {"strategy": "FLEX_START", "maxWaitDuration": "7200s", "timeout": "1800s"}
    assert scheduling(vtrain, "--flex-start") == {"strategy": "FLEX_START"}
    message = aiplatform_v1.Scheduling.from_json(json.dumps(flex), ignore_unknown_fields=False)
    assert message.strategy == aiplatform_v1.Scheduling.Strategy.FLEX_START
    assert message.max_wait_duration.total_seconds() == 7200
    assert scheduling(vtrain) == {}


def test_a_strategy_the_discovery_document_lacks_is_refused(
    vtrain: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An older google-api-python-client: its document has no SPOT yet.
    real = sdk.aiplatform_v1_schemas()
    schema = json.loads(json.dumps(real["GoogleCloudAiplatformV1Scheduling"]))
    schema["properties"]["strategy"]["enum"].remove("SPOT")
    old = {**real, "GoogleCloudAiplatformV1Scheduling": schema}
    monkeypatch.setattr(sdk, "aiplatform_v1_schemas", lambda: old)
    done = vtrain("render", "vertex", "--name", "j", *IMAGE, "--spot", *CMD)
    assert done.status == 2
    assert (
        "--spot: the installed aiplatform v1 discovery document has no such scheduling strategy "
        "(got 'SPOT')" in done.err
    )
    assert "upgrade google-api-python-client" in done.err


REFUSED = [
    ("vertex", ["--max-wait", "2h"], "--max-wait: only a flex-start job waits for its machines"),
    ("vertex", ["--spot", "--flex-start"], "--flex-start: a job has one scheduling strategy"),
    ("vertex", ["--flex-start", "--max-wait", "soon"], "--max-wait: not a duration"),
    ("aiplatform", ["--spot"], "--spot: AI Platform Training has no Spot VMs"),
    ("aiplatform", ["--flex-start"], "--flex-start: only Vertex queues a job"),
    ("kubeflow", ["--framework", "pytorch", "--max-wait", "1h"], "--max-wait: only Vertex"),
]


@pytest.mark.parametrize(("platform", "argv", "expected"), REFUSED)
def test_scheduling_flags_a_platform_cannot_say_are_refused(
    vtrain: Run, platform: str, argv: list[str], expected: str
) -> None:
    done = vtrain("render", platform, "--name", "j", *IMAGE, *argv, *CMD)
    assert done.status == 2 and expected in done.err, done.err


def test_a_spot_job_is_sent_as_rendered_and_rehearsed_with_its_reclaim(
    vtrain: Run, vertex_server: VertexServer, tmp_path: Path
) -> None:
    from google.cloud import aiplatform_v1

    job = tmp_path / "spot.json"
    rendered = vtrain(
        "render",
        "vertex",
        "--name",
        "j",
        "--workers",
        "1",
        *IMAGE,
        "--spot",
        "--format",
        "json",
        "-o",
        str(job),
        *CMD,
    )
    assert rendered.status == 0, rendered.err
    sent = vtrain(
        "submit",
        "vertex",
        "--job",
        str(job),
        "--project",
        "p12345",
        "--api-endpoint",
        vertex_server.address,
    )
    assert sent.status == 0, sent.err
    scheduling_sent = vertex_server.requests[0][1].custom_job.job_spec.scheduling
    assert scheduling_sent.strategy == aiplatform_v1.Scheduling.Strategy.SPOT
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--job",
            str(job),
            "--output-dir",
            str(tmp_path / "out"),
            "--",
            sys.executable,
            "-c",
            "pass",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "note: a job on Spot VMs: a reclaim sends SIGTERM, then SIGKILL" in done.stderr
    assert "--kill ROLE:INDEX@SECONDS:TERM" in done.stderr
