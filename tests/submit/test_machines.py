"""Machines that hold their accelerators: Vertex's machine table and GKE's accelerator table, each
checked against the discovery document's enum, and the jobs they refuse or render."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Result

from vtrain.submit.kubeflow import gke
from vtrain.submit.vertex import machines

Run = Callable[..., Result]
IMAGE = ["--image", "gcr.io/p/t:1"]
CMD = ["--", "python", "t.py"]


def discovery_accelerators() -> set[str]:
    import googleapiclient

    path = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
    schemas = json.loads((path / "aiplatform.v1.json").read_text())["schemas"]
    enum = schemas["GoogleCloudAiplatformV1MachineSpec"]["properties"]["acceleratorType"]["enum"]
    return set(enum) - {"ACCELERATOR_TYPE_UNSPECIFIED"}


def test_every_accelerator_in_the_machine_table_is_one_the_api_knows() -> None:
    from google.cloud import aiplatform_v1

    table = machines.table()
    assert table.accelerators() <= discovery_accelerators()
    assert table.accelerators() <= set(aiplatform_v1.AcceleratorType.__members__)
    # The table says where it comes from and when it was checked.
    assert table.checked and all(s.startswith("https://cloud.google.com/") for s in table.sources)
    # What the issue names: A2 with A100, A2 ultra with A100 80GB, A3 with H100, G2 with L4,
    # N1 with T4, V100, P100 and P4.
    held = table.accelerator_machines
    assert held["a2-highgpu-1g"] == {"NVIDIA_TESLA_A100": (1,)}
    assert held["a2-ultragpu-8g"] == {"NVIDIA_A100_80GB": (8,)}
    assert held["a3-highgpu-8g"] == {"NVIDIA_H100_80GB": (8,)}
    assert held["g2-standard-48"] == {"NVIDIA_L4": (4,)}
    assert set(table.n1_accelerators) == {
        "NVIDIA_TESLA_T4",
        "NVIDIA_TESLA_V100",
        "NVIDIA_TESLA_P100",
        "NVIDIA_TESLA_P4",
    }


def test_every_vertex_name_in_the_gke_table_is_one_the_api_knows() -> None:
    table = gke.table()
    names = set(table.gpus.values()) | {v for v, _ in table.tpus.values() if v}
    assert names <= discovery_accelerators()
    assert table.checked


# The list: each rendered with exit 0 before, each refused by the service.
REFUSED = [
    (
        ["--machine-type", "e2-standard-4", "--accelerator", "NVIDIA_TESLA_T4:1"],
        "--accelerator: e2-standard-4 holds no accelerator",
        "N1 machines (n1-standard-*",
    ),
    (
        ["--machine-type", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_A100:1"],
        "--accelerator: an N1 machine cannot hold NVIDIA_TESLA_A100",
        "a2-highgpu-1g (1)",
    ),
    (
        ["--machine-type", "a2-highgpu-1g", "--accelerator", "NVIDIA_TESLA_T4:1"],
        "--accelerator: a2-highgpu-1g comes with NVIDIA_TESLA_A100:1, not NVIDIA_TESLA_T4",
        "NVIDIA_TESLA_T4 runs on N1 machines",
    ),
    (
        ["--machine-type", "a2-highgpu-1g", "--accelerator", "NVIDIA_TESLA_A100:2"],
        "--accelerator: a2-highgpu-1g holds NVIDIA_TESLA_A100:1",
        "a2-highgpu-2g (2)",
    ),
    (
        ["--accelerator", "NVIDIA_TESLA_T4:3"],
        "--accelerator: NVIDIA_TESLA_T4 comes 1, 2, 4 to an N1 machine",
        "NVIDIA_TESLA_T4:N",
    ),
    (
        ["--machine-type", "n1-bogus-7"],
        "--machine-type: not a machine Vertex trains on",
        "n1-standard-4, n1-standard-8",
    ),
    (
        ["--machine-type", "n1-standard-16", "--accelerator", "NVIDIA_TESLA_V100:1"],
        "--accelerator: n1-standard-16 has 16 vCPUs; 1 NVIDIA_TESLA_V100 allows at most 12",
        "NVIDIA_TESLA_V100:2 or more",
    ),
    (
        [
            "--workers",
            "1",
            "--worker-machine-type",
            "g2-standard-4",
            "--worker-accelerator",
            "NVIDIA_L4:2",
        ],
        "--worker-accelerator: g2-standard-4 holds NVIDIA_L4:1",
        "g2-standard-24",
    ),
    # A parameter server gets no accelerator: on an A2 machine that is a machine without its GPU.
    (
        [
            "--machine-type",
            "a2-highgpu-1g",
            "--accelerator",
            "NVIDIA_TESLA_A100:1",
            "--workers",
            "1",
            "--ps",
            "1",
        ],
        "--ps-accelerator: a2-highgpu-1g comes with NVIDIA_TESLA_A100:1, and none is asked for",
        "--ps-machine-type that holds none",
    ),
    (
        ["--reduction-servers", "1", "--workers", "1", "--reduction-server-machine-type", "n9-x"],
        "--reduction-server-machine-type: not a machine Vertex trains on",
        "a machine of the a2",
    ),
]


@pytest.mark.parametrize(("argv", "expected", "instead"), REFUSED)
def test_a_machine_that_cannot_hold_its_accelerator_is_refused_naming_what_can(
    vtrain: Run, argv: list[str], expected: str, instead: str
) -> None:
    done = vtrain("render", "vertex", "--name", "j", *IMAGE, *argv, *CMD)
    assert done.status == 2, done.out
    assert expected in done.err and instead in done.err, done.err
    assert len(done.err.strip().splitlines()) == 1 and done.out == ""


ACCEPTED = [
    ["--machine-type", "a2-highgpu-2g", "--accelerator", "NVIDIA_TESLA_A100:2"],
    ["--machine-type", "a2-ultragpu-1g", "--accelerator", "NVIDIA_A100_80GB:1"],
    ["--machine-type", "a3-highgpu-8g", "--accelerator", "NVIDIA_H100_80GB:8"],
    ["--machine-type", "g2-standard-24", "--accelerator", "NVIDIA_L4:2"],
    ["--machine-type", "n1-standard-4", "--accelerator", "NVIDIA_TESLA_V100:8"],
    ["--machine-type", "n1-highmem-96", "--accelerator", "NVIDIA_TESLA_T4:4"],
    ["--machine-type", "cloud-tpu", "--accelerator", "TPU_V3:8"],
    ["--machine-type", "e2-standard-4"],
    [
        "--machine-type",
        "a2-highgpu-1g",
        "--accelerator",
        "NVIDIA_TESLA_A100:1",
        "--workers",
        "1",
        "--ps",
        "1",
        "--ps-machine-type",
        "n1-highmem-8",
    ],
]


@pytest.mark.parametrize("argv", ACCEPTED, ids=lambda a: " ".join(a[:4]))
def test_a_machine_with_what_it_holds_renders(vtrain: Run, argv: list[str]) -> None:
    done = vtrain("render", "vertex", "--name", "j", *IMAGE, *argv, "--format", "json", *CMD)
    assert done.status == 0, done.err
    spec = json.loads(done.out)["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]
    assert spec["machineType"] == argv[1]


def test_a_hand_written_job_on_a_machine_that_cannot_hold_its_gpu_is_refused(
    vtrain: Run, tmp_path: Path
) -> None:
    document = {
        "displayName": "x",
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {
                        "machineType": "n1-standard-8",
                        "acceleratorType": "NVIDIA_TESLA_A100",
                        "acceleratorCount": 1,
                    },
                    "replicaCount": "1",
                    "containerSpec": {"imageUri": "gcr.io/p/t:1"},
                }
            ]
        },
    }
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    done = vtrain("submit", "vertex", "--job", str(path), "--project", "p12345")
    assert done.status == 2
    assert (
        "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType: an N1 machine cannot hold "
        "NVIDIA_TESLA_A100" in done.err
    )


def pools(document: dict[str, Any]) -> list[dict[str, Any]]:
    return list(document["jobSpec"]["workerPoolSpecs"])


def test_ps_and_evaluators_get_no_accelerator_unless_asked(vtrain: Run) -> None:
    topology = ["--workers", "1", "--ps", "1", "--evaluators", "1"]
    done = vtrain(
        "render",
        "vertex",
        "--name",
        "j",
        *IMAGE,
        *topology,
        "--accelerator",
        "NVIDIA_TESLA_T4:1",
        "--format",
        "json",
        *CMD,
    )
    assert done.status == 0, done.err
    chief, worker, ps, evaluator = (p["machineSpec"] for p in pools(json.loads(done.out)))
    assert chief["acceleratorType"] == worker["acceleratorType"] == "NVIDIA_TESLA_T4"
    assert "acceleratorType" not in ps and "acceleratorType" not in evaluator
    asked = vtrain(
        "render",
        "vertex",
        "--name",
        "j",
        *IMAGE,
        *topology,
        "--accelerator",
        "NVIDIA_TESLA_T4:1",
        "--ps-accelerator",
        "NVIDIA_TESLA_T4:2",
        "--evaluator-accelerator",
        "NVIDIA_TESLA_P4:1",
        "--format",
        "json",
        *CMD,
    )
    assert asked.status == 0, asked.err
    _, _, ps, evaluator = (p["machineSpec"] for p in pools(json.loads(asked.out)))
    assert (ps["acceleratorType"], ps["acceleratorCount"]) == ("NVIDIA_TESLA_T4", 2)
    assert evaluator["acceleratorType"] == "NVIDIA_TESLA_P4"


def test_help_says_ps_and_evaluators_default_to_no_accelerator() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vtrain", "render", "vertex", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    for role in ("ps", "evaluator"):
        # The flag's entry: its line, and the help text argparse may put on the next.
        entry = done.stdout.split(f"\n  --{role}-accelerator TYPE:COUNT", 1)[1].split("\n  -")[0]
        assert "default: none" in entry, entry
    assert "parameter servers and evaluators get none" in done.stdout


def test_a_ps_without_workers_is_refused_on_every_platform(vtrain: Run) -> None:
    expected = "--ps: parameter servers serve workers, and the job has none (got 1)"
    for platform, extra in (
        ("vertex", []),
        ("aiplatform", []),
        ("kubeflow", ["--framework", "tensorflow"]),
        ("kubeflow", ["--framework", "mxnet"]),
    ):
        done = vtrain("render", platform, "--name", "j", *IMAGE, "--ps", "1", *extra, *CMD)
        assert done.status == 2 and expected in done.err, (platform, done.err)
        assert "There must be at least one worker" in done.err
        with_workers = vtrain(
            "render", platform, "--name", "j", *IMAGE, "--ps", "1", "--workers", "1", *extra, *CMD
        )
        assert with_workers.status == 0, with_workers.err


BAD_FILES = [
    (
        {
            "displayName": "x",
            "jobSpec": {
                "workerPoolSpecs": [
                    {
                        "machineSpec": {"machineType": "n1-standard-4"},
                        "replicaCount": "1",
                        "containerSpec": {"imageUri": "i"},
                    },
                    {},
                    {
                        "machineSpec": {"machineType": "n1-standard-4"},
                        "replicaCount": "1",
                        "containerSpec": {"imageUri": "i"},
                    },
                ]
            },
        },
        "jobSpec.workerPoolSpecs[2].replicaCount: parameter servers serve workers",
    ),
    (
        {
            "trainingInput": {
                "scaleTier": "CUSTOM",
                "masterType": "n1-standard-4",
                "region": "us-central1",
                "masterConfig": {"imageUri": "i"},
                "parameterServerType": "n1-standard-4",
                "parameterServerCount": "1",
            }
        },
        "trainingInput.parameterServerCount: parameter servers serve workers",
    ),
    (
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": "x"},
            "spec": {
                "runPolicy": {},
                "tfReplicaSpecs": {
                    role: {
                        "replicas": 1,
                        "template": {
                            "spec": {"containers": [{"name": "tensorflow", "image": "i"}]}
                        },
                    }
                    for role in ("Chief", "PS")
                },
            },
        },
        "spec.tfReplicaSpecs.PS: parameter servers serve workers",
    ),
]


@pytest.mark.parametrize(("document", "expected"), BAD_FILES)
def test_a_job_file_with_ps_and_no_workers_is_refused(
    vtrain: Run, tmp_path: Path, document: dict[str, Any], expected: str
) -> None:
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    platform = next(
        p
        for k, p in (("trainingInput", "aiplatform"), ("kind", "kubeflow"), ("jobSpec", "vertex"))
        if k in document
    )
    done = vtrain("render", platform, "--job", str(path))
    assert done.status == 2 and expected in done.err, done.err


def test_a_job_file_with_a_yaml_mistake_says_where_on_one_line(vtrain: Run, tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text("jobSpec:\n  workerPoolSpecs: [\n  - a: 1\n  b: 2\n")
    done = vtrain("local", "run", "--job", str(path), "--", "true")
    assert done.status == 2, done.err
    assert f"{path}: not valid YAML: " in done.err and " at line 3, column 3: '- a: 1'" in done.err
    assert done.err.count("\n") == 1 and "<unicode string>" not in done.err, done.err
