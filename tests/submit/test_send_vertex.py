"""`vtrain submit vertex` through the SDK's real JobServiceClient, to a gRPC server on loopback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Result, VertexServer
from targets import COMMAND, TARGETS

Run = Callable[..., Result]


def submit(vtrain: Run, server: VertexServer, target: str, *extra: str) -> Result:
    platform, args = TARGETS[target]
    return vtrain(
        "submit",
        platform,
        *args,
        "--project",
        "my-project",
        "--region",
        "europe-west4",
        "--api-endpoint",
        server.address,
        *extra,
        *COMMAND,
    )


def test_a_custom_job_reaches_the_server_as_rendered(
    vtrain: Run, vertex_server: VertexServer
) -> None:
    from google.cloud import aiplatform_v1
    from google.protobuf.json_format import MessageToDict

    rendered = json.loads(
        vtrain("render", "vertex", *TARGETS["vertex"][1], "--format", "json", *COMMAND).out
    )
    done = submit(vtrain, vertex_server, "vertex")
    assert done.status == 0, done.err
    ((kind, request),) = vertex_server.requests
    assert kind == "customJobs"
    assert request.parent == "projects/my-project/locations/europe-west4"
    job = request.custom_job
    assert MessageToDict(aiplatform_v1.CustomJob.pb(job)) == rendered
    assert job.job_spec.scheduling.restart_job_on_worker_restart is True
    assert done.out.strip() == "projects/my-project/locations/europe-west4/customJobs/4242"


def test_a_study_becomes_a_hyperparameter_tuning_job(
    vtrain: Run, vertex_server: VertexServer
) -> None:
    done = submit(vtrain, vertex_server, "vertex_study")
    assert done.status == 0, done.err
    ((kind, request),) = vertex_server.requests
    assert kind == "hyperparameterTuningJobs"
    job = request.hyperparameter_tuning_job
    assert job.display_name == "golden"
    assert job.study_spec.metrics[0].metric_id == "loss"
    assert [p.parameter_id for p in job.study_spec.parameters][:2] == ["learning_rate", "layers"]
    assert job.max_trial_count == 20 and job.parallel_trial_count == 4
    assert len(job.trial_job_spec.worker_pool_specs) == 4
    assert "hyperparameterTuningJobs/4242" in done.out


@pytest.mark.parametrize(
    ("states", "status"),
    [
        (["JOB_STATE_PENDING", "JOB_STATE_RUNNING", "JOB_STATE_SUCCEEDED"], 0),
        (["JOB_STATE_PENDING", "JOB_STATE_RUNNING", "JOB_STATE_FAILED"], 1),
    ],
)
def test_wait_follows_the_job_until_it_ends(
    vtrain: Run, vertex_server: VertexServer, states: list[str], status: int
) -> None:
    vertex_server.states = states
    vertex_server.error = (
        "replica workerpool0-0 exited with a non-zero status of 1 password=hunter2"
    )
    done = submit(vtrain, vertex_server, "vertex", "--wait", "--poll", "0")
    assert done.status == status, done.err
    gets = [r for kind, r in vertex_server.requests if kind == "get"]
    assert len(gets) == 3
    assert {g.name for g in gets} == {"projects/my-project/locations/europe-west4/customJobs/4242"}
    for state in states:
        assert state in done.err
    if status:
        assert "non-zero status" in done.err
    assert "hunter2" not in done.err + done.out


def test_wait_follows_a_tuning_job_too(vtrain: Run, vertex_server: VertexServer) -> None:
    vertex_server.states = ["JOB_STATE_PENDING", "JOB_STATE_SUCCEEDED"]
    done = submit(vtrain, vertex_server, "vertex_study", "--wait", "--poll", "0")
    assert done.status == 0, done.err
    assert [type(r).__name__ for k, r in vertex_server.requests] == [
        "CreateHyperparameterTuningJobRequest",
        "GetHyperparameterTuningJobRequest",
        "GetHyperparameterTuningJobRequest",
    ]


def test_a_rendered_file_is_sent_unchanged(
    vtrain: Run, vertex_server: VertexServer, tmp_path: Path
) -> None:
    from google.cloud import aiplatform_v1
    from google.protobuf.json_format import MessageToDict

    job_file = tmp_path / "job.yaml"
    assert (
        vtrain(
            "render", "vertex", *TARGETS["vertex_study"][1], "-o", str(job_file), *COMMAND
        ).status
        == 0
    )
    import yaml

    written = yaml.safe_load(job_file.read_text())
    done = vtrain(
        "submit",
        "vertex",
        "--job",
        str(job_file),
        "--project",
        "123456789012",
        "--api-endpoint",
        vertex_server.address,
    )
    assert done.status == 0, done.err
    ((_, request),) = vertex_server.requests
    sent = request.hyperparameter_tuning_job
    assert MessageToDict(aiplatform_v1.HyperparameterTuningJob.pb(sent)) == written
    assert request.parent == "projects/123456789012/locations/us-central1"


def test_secrets_travel_in_the_request_and_never_in_the_output(
    vtrain: Run, vertex_server: VertexServer
) -> None:
    done = vtrain(
        "submit",
        "vertex",
        "--name",
        "s",
        "--image",
        "gcr.io/p/t:1",
        "--env",
        "API_TOKEN=tok-123",
        "--project",
        "my-project",
        "--api-endpoint",
        vertex_server.address,
        "--",
        "python",
        "t.py",
        "--db_password=pw-456",
    )
    assert done.status == 0, done.err
    container = vertex_server.requests[0][1].custom_job.job_spec.worker_pool_specs[0].container_spec
    assert container.env[0].value == "tok-123"
    assert "--db_password=pw-456" in container.args
    shown = vtrain(
        "render",
        "vertex",
        "--name",
        "s",
        "--image",
        "gcr.io/p/t:1",
        "--env",
        "API_TOKEN=tok-123",
        "--",
        "python",
        "t.py",
        "--db_password=pw-456",
    )
    for text in (done.out, done.err, shown.out, shown.err):
        assert "tok-123" not in text and "pw-456" not in text
    assert "***" in shown.out


@pytest.mark.parametrize("target", ["vertex", "vertex_study"])
def test_the_console_url_is_the_one_the_installed_sdk_builds(
    vtrain: Run, vertex_server: VertexServer, target: str
) -> None:
    from types import SimpleNamespace

    from google.cloud.aiplatform import jobs
    from google.cloud.aiplatform.utils import console_utils

    done = submit(vtrain, vertex_server, target)
    assert done.status == 0, done.err
    name = done.out.strip()
    (line,) = [x for x in done.err.splitlines() if "console:" in x]
    printed = line.split("console: ", 1)[1]
    # The SDK's own method, run on the job the server returned (its name, its job type).
    cls = jobs.CustomJob if target == "vertex" else jobs.HyperparameterTuningJob
    stand_in = SimpleNamespace(
        resource_name=name, _parse_resource_name=cls._parse_resource_name, _job_type=cls._job_type
    )
    assert printed == jobs._Job._dashboard_uri(stand_in)
    if target == "vertex":
        assert printed == console_utils.custom_job_console_uri(name)
    assert printed.endswith("/locations/europe-west4/training/4242?project=my-project")
