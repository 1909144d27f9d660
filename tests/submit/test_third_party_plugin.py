"""A plugin the core has never heard of renders, checks and rehearses like a built-in one.

The contract test's relay plugin is registered at runtime; its declaration
(`kubeflow = KubeflowJob(kind="TFJob", ...)`: its coordinator, servers and
workers are a chief, ps and workers) is all the core learns of it. Its jobs
are checked with the engines' own types, and each rehearsal runs the relay
framework itself on every replica: a serving coordinator and parameter server,
and two workers that meet through them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Result

from vtrain import plugins
from vtrain.cli import main
from vtrain.plugins.base import KubeflowJob

RELAY = Path(__file__).parents[1] / "core" / "plugins" / "relay"
sys.path.insert(0, str(RELAY))
from relay_plugin import RelayPlugin  # noqa: E402

Run = Callable[..., Result]
JOB = [
    "--name",
    "relay",
    "--workers",
    "2",
    "--ps",
    "1",
    "--image",
    "gcr.io/proj/relay:1",
    "--output-dir",
    "gs://my-bucket/relay",
    "--env",
    "MODE=train",
]
COMMAND = ["--", "python", "relay_job.py"]


@pytest.fixture
def relay() -> Iterator[None]:
    plugins.register("relay", RelayPlugin, replace=True)
    yield
    plugins.unregister("relay")


def render(vtrain: Run, platform: str, framework: str, *extra: str) -> dict[str, Any]:
    done = vtrain(
        "render", platform, "--framework", framework, *JOB, "--format", "json", *extra, *COMMAND
    )
    assert done.status == 0, done.err
    document: dict[str, Any] = json.loads(done.out)
    return document


def test_the_relay_plugin_is_a_tfjob_for_kubeflow_as_tensorflow_is(
    vtrain: Run, relay: None
) -> None:
    from kubeflow.training.api_client import ApiClient

    class Body:
        def __init__(self, doc: Any) -> None:
            self.data = json.dumps(doc)

    document = render(vtrain, "kubeflow", "relay")
    client = ApiClient()
    job = client.deserialize(Body(document), "KubeflowOrgV1TFJob")
    assert client.sanitize_for_serialization(job) == document
    specs = job.spec.tf_replica_specs
    assert {name: spec.replicas for name, spec in specs.items()} == {
        "Chief": 1,
        "Worker": 2,
        "PS": 1,
    }
    assert {s.template.spec.containers[0].name for s in specs.values()} == {"tensorflow"}
    # Nothing in the manifest depends on which plugin declared the kind.
    assert document == render(vtrain, "kubeflow", "tensorflow")


def test_the_relay_plugin_renders_for_vertex(vtrain: Run, relay: None) -> None:
    from google.cloud import aiplatform_v1
    from google.protobuf.json_format import MessageToDict

    document = render(vtrain, "vertex", "relay")
    message = aiplatform_v1.CustomJob.from_json(json.dumps(document), ignore_unknown_fields=False)
    assert MessageToDict(aiplatform_v1.CustomJob.pb(message)) == document
    pools = message.job_spec.worker_pool_specs
    assert [p.replica_count for p in pools] == [1, 2, 1]
    assert document == render(vtrain, "vertex", "tensorflow")


@pytest.mark.parametrize("platform", ["kubeflow", "vertex"])
def test_the_rendered_relay_job_rehearses_with_the_relay_framework(
    vtrain: Run, relay: None, tmp_path: Path, platform: str
) -> None:
    job = tmp_path / "job.yaml"
    done = vtrain("render", platform, "--framework", "relay", *JOB, "-o", str(job), *COMMAND)
    assert done.status == 0, done.err
    # The local command stands in for the image's: each replica registers the plugin
    # and configures it, as in the contract test, whose late coordinator also lets the
    # parameter server start before the workers (who wait for the coordinator only) use it.
    ran = subprocess.run(
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
            str(RELAY / "relay_job.py"),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "RELAY_CHIEF_DELAY": "3"},
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    said = {
        name: json.loads(line.split("| relay ", 1)[1])
        for line in ran.stdout.splitlines()
        for name in ("worker-0", "worker-1")
        if line.startswith(name) and "| relay " in line
    }
    assert sorted(said) == ["worker-0", "worker-1"], ran.stdout
    # Worker 0 leads (the coordinator never trains); the two met through the ps.
    assert said["worker-0"]["is_leader"] and not said["worker-1"]["is_leader"]
    assert sorted(s["total"] for s in said.values()) in ([1, 3], [2, 3])


def declared(kubeflow: KubeflowJob | None) -> type[RelayPlugin]:
    return type("Declared", (RelayPlugin,), {"kubeflow": kubeflow})


REFUSED = [
    (declared(None), [], "--framework: the bespoke plugin declares no Kubeflow job"),
    (
        declared(KubeflowJob(kind="JAXJob")),
        [],
        "--framework: the bespoke plugin declares a job kind the training operator does not run",
    ),
    (
        declared(KubeflowJob(kind="PyTorchJob")),
        ["--workers", "1", "--ps", "1"],
        "--ps: a bespoke job has a master and workers only",
    ),
]


@pytest.mark.parametrize(("plugin", "argv", "expected"), REFUSED)
def test_a_declaration_kubeflow_cannot_run_is_refused_naming_the_plugin(
    vtrain: Run, plugin: type[RelayPlugin], argv: list[str], expected: str
) -> None:
    plugins.register("bespoke", plugin, replace=True)
    try:
        done = vtrain(
            "render",
            "kubeflow",
            "--framework",
            "bespoke",
            "--name",
            "j",
            "--image",
            "gcr.io/p/t:1",
            *argv,
            *COMMAND,
        )
    finally:
        plugins.unregister("bespoke")
    assert done.status == 2, done.out + done.err
    assert len(done.err.strip().splitlines()) == 1, done.err
    assert expected in done.err and "Traceback" not in done.err
    assert done.out == ""
    # Vertex runs the same job: the declaration is Kubeflow's business only.
    plugins.register("bespoke", plugin, replace=True)
    try:
        assert (
            vtrain(
                "render",
                "vertex",
                "--framework",
                "bespoke",
                "--name",
                "j",
                "--image",
                "gcr.io/p/t:1",
                *argv,
                *COMMAND,
            ).status
            == 0
        )
    finally:
        plugins.unregister("bespoke")


def test_an_unregistered_framework_is_not_a_choice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["render", "kubeflow", "--framework", "relay", "--image", "i", *COMMAND])
    assert ended.value.code == 2
    assert "--framework: invalid choice: 'relay'" in capsys.readouterr().err
