"""`vtrain render vertex --experiment/--experiment-run/--tensorboard`: Vertex AI Experiments.

The rendered CustomJob reads back unchanged through the API's own protos, and its
resource names are the ones the API library's own path builders make. What Vertex
would refuse (a bad name, a run without its experiment, a TensorBoard without the
service account or output folder it needs, the flags on another platform) is refused
before anything is sent, naming the flag.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from conftest import Result

Run = Callable[..., Result]
JOB = [
    "--format",
    "json",
    "--image",
    "gcr.io/proj/train:1",
    "--project",
    "my-proj",
    "--region",
    "europe-west4",
]
NEEDS = [
    "--service-account",
    "sa@my-proj.iam.gserviceaccount.com",
    "--output-dir",
    "gs://my-bucket/run",
]


def test_the_fields_read_back_through_the_protos_and_name_what_the_api_names(vtrain: Run) -> None:
    from google.cloud import aiplatform_v1
    from google.protobuf.json_format import MessageToDict

    done = vtrain(
        "render", "vertex", "--name", "Nightly_Run", *JOB, *NEEDS,
        "--experiment", "churn", "--tensorboard", "1234",
        "--", "python", "-m", "trainer.task",
    )  # fmt: skip
    assert done.status == 0, done.err
    document = json.loads(done.out)
    job = aiplatform_v1.CustomJob.from_json(json.dumps(document), ignore_unknown_fields=False)
    assert MessageToDict(aiplatform_v1.CustomJob.pb(job)) == document
    metadata = aiplatform_v1.MetadataServiceClient
    assert job.job_spec.experiment == metadata.context_path(
        "my-proj", "europe-west4", "default", "churn"
    )
    # Vertex names a run's context <experiment>-<run>; a job that names no run is its own.
    assert job.job_spec.experiment_run == metadata.context_path(
        "my-proj", "europe-west4", "default", "churn-nightly-run"
    )
    assert job.job_spec.tensorboard == aiplatform_v1.TensorboardServiceClient.tensorboard_path(
        "my-proj", "europe-west4", "1234"
    )


def test_a_named_run_is_that_run(vtrain: Run) -> None:
    done = vtrain(
        "render", "vertex", *JOB, "--experiment", "churn", "--experiment-run", "try-2",
        "--", "python", "t.py",
    )  # fmt: skip
    assert done.status == 0, done.err
    spec = json.loads(done.out)["jobSpec"]
    assert spec["experimentRun"].endswith("/metadataStores/default/contexts/churn-try-2")
    assert "tensorboard" not in spec


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--experiment", "Churn"], "--experiment"),
        (["--experiment-run", "r1"], "--experiment-run"),
        (["--experiment", "churn", "--experiment-run", "r_1"], "--experiment-run"),
        (["--tensorboard", "1234", "--output-dir", "gs://my-bucket/run"], "--service-account"),
        (
            ["--tensorboard", "1234", "--service-account", "sa@my-proj.iam.gserviceaccount.com"],
            "output",
        ),
        (["--tensorboard", "tensorboards/12", *NEEDS], "--tensorboard"),
    ],
)
def test_what_vertex_would_refuse_is_refused_naming_the_flag(
    vtrain: Run, flags: list[str], said: str
) -> None:
    done = vtrain("render", "vertex", *JOB, *flags, "--", "python", "t.py")
    assert done.status == 2, done.out
    assert said in done.err, done.err


def test_another_platform_refuses_the_flags(vtrain: Run) -> None:
    done = vtrain(
        "render", "kubeflow", "--image", "i:1", "--experiment", "churn", "--", "python", "t.py"
    )
    assert done.status == 2, done.out
    assert "--experiment" in done.err and "only Vertex" in done.err, done.err
