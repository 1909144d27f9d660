"""AI Platform's command and arguments as the service reads them: containerCommand/containerArgs
per role, or trainingInput.args, never both (the ml v1 discovery document says so, and the schema
check reads that rule from it)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Result

from vtrain.submit.aiplatform.schema import Exclusive, exclusive_fields, problems
from vtrain.submit.sdk import ml_v1_schemas

Run = Callable[..., Result]
IMAGE = ["--image", "gcr.io/p/t:1", "--evaluator-image", "gcr.io/p/e:1"]
TOPOLOGY = ["--workers", "2", "--ps", "1", "--evaluators", "1"]
CONFIGS = ("masterConfig", "workerConfig", "parameterServerConfig", "evaluatorConfig")


def render(vtrain: Run, *command: str) -> dict[str, Any]:
    done = vtrain(
        "render", "aiplatform", "--name", "j", *TOPOLOGY, *IMAGE, "--format", "json", "--", *command
    )
    assert done.status == 0, done.err
    document: dict[str, Any] = json.loads(done.out)
    return document


def schema_problems(document: dict[str, Any]) -> list[tuple[str, str, Any]]:
    schemas = ml_v1_schemas()
    return problems(document, schemas["GoogleCloudMlV1__Job"], schemas, "")


def test_the_discovery_document_says_which_fields_exclude_each_other() -> None:
    found = exclusive_fields(ml_v1_schemas())
    replica, training = "GoogleCloudMlV1__ReplicaConfig", "GoogleCloudMlV1__TrainingInput"
    assert set(found) == {
        Exclusive(replica, "containerCommand", training, "args"),
        Exclusive(replica, "containerArgs", training, "args"),
    }


def test_a_command_and_its_args_go_to_every_role_and_not_to_training_input(vtrain: Run) -> None:
    document = render(vtrain, "python", "-m", "trainer.task", "--epochs", "3")
    training = document["trainingInput"]
    assert "args" not in training
    for config in CONFIGS:
        assert training[config]["containerCommand"] == ["python"]
        assert training[config]["containerArgs"] == ["-m", "trainer.task", "--epochs", "3"]
    assert schema_problems(document) == []


def test_args_alone_go_to_the_image_s_entrypoint_through_training_input(vtrain: Run) -> None:
    document = render(vtrain, "--epochs", "3")
    training = document["trainingInput"]
    assert training["args"] == ["--epochs", "3"]
    assert all(
        "containerCommand" not in training[c] and "containerArgs" not in training[c]
        for c in CONFIGS
    )
    assert schema_problems(document) == []
    command_only = render(vtrain, "python")["trainingInput"]
    assert "args" not in command_only and "containerArgs" not in command_only["masterConfig"]


def old_shape() -> dict[str, Any]:
    """What vtrain rendered before: each role's command, and the args job-wide."""
    return {
        "trainingInput": {
            "scaleTier": "CUSTOM",
            "masterType": "n1-standard-4",
            "region": "us-central1",
            "masterConfig": {"imageUri": "gcr.io/p/t:1", "containerCommand": ["python"]},
            "args": ["-m", "trainer.task"],
        }
    }


def test_the_schema_check_refuses_command_and_args_together() -> None:
    assert schema_problems(old_shape()) == [
        (
            ".trainingInput.masterConfig.containerCommand",
            "set together with .trainingInput.args, and TrainingInput.args and containerCommand "
            "are mutually exclusive",
            ["python"],
        )
    ]
    both = old_shape()
    both["trainingInput"]["workerConfig"] = {"imageUri": "i", "containerArgs": ["x"]}
    assert [p for p, _, _ in schema_problems(both)] == [
        ".trainingInput.masterConfig.containerCommand",
        ".trainingInput.workerConfig.containerArgs",
    ]


def test_a_config_yaml_of_the_old_shape_is_refused_by_submit_and_the_rehearsal(
    vtrain: Run, tmp_path: Path
) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(old_shape()))
    done = vtrain("submit", "aiplatform", "--job", str(path))
    assert done.status == 2
    assert (
        f"{path}: .trainingInput.masterConfig.containerCommand: set together with "
        ".trainingInput.args" in done.err
    )
    rehearsed = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--job",
            str(path),
            "--output-dir",
            str(tmp_path / "out"),
            "--",
            sys.executable,
            "-c",
            "pass",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert rehearsed.returncode == 2 and "mutually exclusive" in rehearsed.stderr


def test_the_rehearsal_runs_each_role_s_command_and_args(vtrain: Run, tmp_path: Path) -> None:
    job, rec, out = tmp_path / "config.json", tmp_path / "rec", tmp_path / "out"
    record = str(Path(__file__).parent / "replicas" / "record.py")
    done = vtrain(
        "render",
        "aiplatform",
        "--name",
        "j",
        "--workers",
        "1",
        "--image",
        "i",
        "--output-dir",
        "gs://bucket/run",
        "--format",
        "json",
        "-o",
        str(job),
        "--",
        sys.executable,
        record,
        str(rec),
        "2",
        "--epochs",
        "3",
    )
    assert done.status == 0, done.err
    assert "containerArgs" in json.loads(job.read_text())["trainingInput"]["workerConfig"]
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
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    for replica in ("chief-0", "worker-0"):
        recorded = json.loads((rec / f"{replica}.json").read_text())
        # The service passes jobDir as --job-dir after the program's own arguments.
        assert recorded["args"] == ["--epochs", "3", f"--job-dir={out}"]
