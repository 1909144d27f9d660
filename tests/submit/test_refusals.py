"""Every impossible job is refused before anything is sent: one line naming the flag, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import KubeServer, Result, VertexServer, write_kubeconfig
from targets import STUDY

Run = Callable[..., Result]
IMAGE = ["--image", "gcr.io/p/t:1"]
CMD = ["--", "python", "train.py"]

# (argv after `vtrain submit vertex`, what the one-line error must name)
VERTEX = [
    (
        ["--accelerator", ":2", *IMAGE, *CMD],
        "--accelerator: an accelerator count with no accelerator type",
    ),
    (
        ["--accelerator", "2", *IMAGE, *CMD],
        "--accelerator: an accelerator count with no accelerator type",
    ),
    (
        ["--worker-accelerator", "NVIDIA_TESLA_T4:x", "--workers", "1", *IMAGE, *CMD],
        "--worker-accelerator: not an accelerator count",
    ),
    (
        ["--accelerator", "NVIDIA_TESLA_T5:1", *IMAGE, *CMD],
        "--accelerator: not a Vertex accelerator type",
    ),
    (["--output-dir", "/tmp/out", *IMAGE, *CMD], "--output-dir: not a Cloud Storage URI"),
    (["--output-dir", "s3://bucket/out", *IMAGE, *CMD], "--output-dir: not a Cloud Storage URI"),
    # A gs:// URI whose bucket breaks a rule: the rule is named, not "not a URI".
    (
        ["--output-dir", "gs://b/r", *IMAGE, *CMD],
        "--output-dir: the bucket name is 1 character long (got 'gs://b/r'); expected 3 to 63",
    ),
    (
        ["--output-dir", "gs://My_Bucket/r", *IMAGE, *CMD],
        "--output-dir: the bucket name holds a character other than lowercase letters",
    ),
    (
        ["--output-dir", "gs://-bucket/r", *IMAGE, *CMD],
        "--output-dir: the bucket name does not start and end with a letter or digit",
    ),
    (
        ["--output-dir", "gs://" + "a" * 64 + "/r", *IMAGE, *CMD],
        "--output-dir: the bucket name is 64 characters long",
    ),
    (
        ["--output-dir", "gs://a..b/r", *IMAGE, *CMD],
        "--output-dir: the bucket name has an empty part, or one over 63 characters",
    ),
    (
        ["--study", STUDY, *IMAGE, *CMD, "--learning_rate=0.1"],
        "--study: parameter 'learning_rate' of the study is also fixed",
    ),
    (
        ["--study", STUDY, *IMAGE, "--", "sh", "-c", "python train.py"],
        "--study: a shell script does not receive the trials' flags",
    ),
    (
        ["--ps", "1", "--reduction-servers", "1", *IMAGE, *CMD],
        "--reduction-servers: Vertex's pool 2 holds",
    ),
    (["--env", "TF_CONFIG={}", *IMAGE, *CMD], "--env: the platform sets this variable"),
    (["--env", "NOVALUE", *IMAGE, *CMD], "--env: not NAME=VALUE"),
    (["--label", "Team=ML", *IMAGE, *CMD], "--label: not a label"),
    (
        ["--worker-image", "gcr.io/p/w:1", *IMAGE, *CMD],
        "--worker-image: the job has no worker replicas",
    ),
    (["--workers", "-1", *IMAGE, *CMD], "--workers: a replica count cannot be negative"),
    (CMD, "--image: missing"),
    (["--timeout", "soon", *IMAGE, *CMD], "--timeout: not a duration"),
    (["--project", "Bad_Project!", *IMAGE, *CMD], "--project: not a project number or id"),
    (["--framework", "pytorch", *IMAGE, *CMD], None),  # accepted flag: refused by nothing
    (["--python-package", "gs://b/p.tar.gz", "--python-module", "m"], "--executor-image: missing"),
    (
        [
            "--python-package",
            "gs://b/p.tar.gz",
            "--python-module",
            "m",
            "--executor-image",
            "e",
            *IMAGE,
        ],
        "--image: a pre-built container job runs --executor-image",
    ),
    (
        ["--python-package", "pkgdir", "--python-module", "m", "--executor-image", "e"],
        "--staging: a local package must be staged",
    ),
    (["--wait", "--dry-run", *IMAGE, *CMD], "--wait: nothing is sent to follow"),
]


def one_line_error(done: Result, expected: str) -> None:
    assert done.status == 2, done.out + done.err
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    assert expected in lines[0], lines[0]
    assert "Traceback" not in done.err
    assert done.out == ""


@pytest.mark.parametrize(("argv", "expected"), [c for c in VERTEX if c[1]])
def test_vertex_refusals_name_the_flag_and_send_nothing(
    vtrain: Run, vertex_server: VertexServer, argv: list[str], expected: str
) -> None:
    done = vtrain(
        "submit",
        "vertex",
        "--name",
        "j",
        "--project",
        "my-project",
        "--api-endpoint",
        vertex_server.address,
        *argv,
    )
    one_line_error(done, expected)
    assert vertex_server.requests == []


def test_a_missing_project_is_refused_before_sending(vtrain: Run) -> None:
    one_line_error(vtrain("submit", "vertex", "--name", "j", *IMAGE, *CMD), "--project: missing")


AIPLATFORM = [
    (
        ["--flags-only", "--evaluators", "1", *IMAGE, "--", "--epochs", "1"],
        "--evaluators: gcloud ai-platform jobs submit training has no flag",
    ),
    (
        ["--flags-only", "--study", STUDY, *IMAGE, "--", "--epochs", "1"],
        "--study: gcloud ai-platform jobs submit training has no flag",
    ),
    (
        ["--flags-only", *IMAGE, *CMD],
        "COMMAND: gcloud flags pass arguments to the image's ENTRYPOINT only",
    ),
    (
        ["--evaluators", "1", "--no-use-chief", *IMAGE, *CMD],
        "--no-use-chief: an evaluator in the job implies useChiefInTfConfig",
    ),
    (["--env", "A=1", *IMAGE, *CMD], "--env: AI Platform's trainingInput has no environment"),
    (
        ["--reduction-servers", "1", *IMAGE, *CMD],
        "--reduction-servers: only Vertex runs a Reduction Server",
    ),
    (
        ["--accelerator", "NVIDIA_L4:1", *IMAGE, *CMD],
        "--accelerator: not an AI Platform accelerator type",
    ),
    (["--output-dir", "my-bucket/out", *IMAGE, *CMD], "--output-dir: not a Cloud Storage URI"),
    (["--name", "has-dash", *IMAGE, *CMD], "--name: not a aiplatform job name"),
]


@pytest.mark.parametrize(("argv", "expected"), AIPLATFORM)
def test_aiplatform_refusals(vtrain: Run, argv: list[str], expected: str) -> None:
    name = [] if "--name" in argv else ["--name", "j"]
    one_line_error(vtrain("submit", "aiplatform", *name, *argv), expected)


KUBEFLOW = [
    (
        ["--framework", "pytorch", "--ps", "1", *IMAGE, *CMD],
        "--ps: a pytorch job has a master and workers only",
    ),
    (
        ["--framework", "xgboost", "--evaluators", "1", *IMAGE, *CMD],
        "--evaluators: a xgboost job has a master",
    ),
    ([*IMAGE, *CMD], "--framework: Kubeflow needs the job's kind"),
    (
        ["--trainjob", "--study", STUDY, *IMAGE, *CMD],
        "--study: Katib's trials here run a training-operator job, not a TrainJob",
    ),
    (
        ["--framework", "tensorflow", "--region", "us-east1", *IMAGE, *CMD],
        "--region: the kubeconfig names the cluster",
    ),
    (
        ["--framework", "tensorflow", "--output-dir", "relative/out", *IMAGE, *CMD],
        "--output-dir: not a Cloud Storage URI or a path in the pods",
    ),
    (
        ["--framework", "tensorflow", "--name", "Not_A_Name", *IMAGE, *CMD],
        "--name: not a kubeflow job name",
    ),
    (
        ["--framework", "tensorflow", "--restart-job-on-worker-restart", *IMAGE, *CMD],
        "--restart-job-on-worker-restart: only Vertex",
    ),
]


@pytest.mark.parametrize(("argv", "expected"), KUBEFLOW)
def test_kubeflow_refusals_send_nothing(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path, argv: list[str], expected: str
) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    name = [] if "--name" in argv else ["--name", "j"]
    one_line_error(vtrain("submit", "kubeflow", *name, "--kubeconfig", config, *argv), expected)
    assert kube_server.calls == []


def chief_of_two() -> dict[str, object]:
    return {
        "displayName": "hand-written",
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {"machineType": "n1-standard-4"},
                    "replicaCount": "2",
                    "containerSpec": {"imageUri": "gcr.io/p/t:1", "command": ["python", "t.py"]},
                }
            ]
        },
    }


BAD_FILES = [
    (
        chief_of_two(),
        "workerPoolSpecs[0].replicaCount: the primary pool (the chief) runs exactly one replica",
    ),
    (
        {
            "displayName": "x",
            "jobSpec": {
                "workerPoolSpecs": [
                    {
                        "machineSpec": {"machineType": "n1-standard-4", "acceleratorCount": 2},
                        "replicaCount": "1",
                        "containerSpec": {"imageUri": "gcr.io/p/t:1"},
                    }
                ]
            },
        },
        "machineSpec.acceleratorCount: an accelerator count with no accelerator type",
    ),
    (
        {
            "displayName": "x",
            "jobSpec": {
                "workerPoolSpecs": [
                    {"replicaCount": "1", "containerSpec": {"imageUri": "i", "comand": ["x"]}}
                ]
            },
        },
        'has no field named "comand"',
    ),
    (
        {
            "trainingInput": {
                "scaleTier": "CUSTOM",
                "masterType": "n1-standard-4",
                "region": "us-central1",
                "masterConfig": {"imageUri": "i"},
                "evaluatorCount": "1",
                "evaluatorType": "n1-standard-4",
                "useChiefInTfConfig": False,
            }
        },
        "trainingInput.useChiefInTfConfig: an evaluator in the job implies",
    ),
    (
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": "x"},
            "spec": {
                "runPolicy": {},
                "tfReplicaSpecs": {
                    "Chief": {
                        "replicas": 2,
                        "template": {
                            "spec": {"containers": [{"name": "tensorflow", "image": "i"}]}
                        },
                    }
                },
            },
        },
        "spec.tfReplicaSpecs.Chief.replicas: the chief pool runs exactly one replica",
    ),
    (
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "x"},
            "spec": {
                "runPolicy": {},
                "pytorchReplicaSpecs": {
                    "Master": {
                        "replicas": 1,
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": "pytorch", "image": "i", "imagePullPolicyy": "Always"}
                                ]
                            }
                        },
                    }
                },
            },
        },
        "imagePullPolicyy: unknown field",
    ),
    ({"kind": "list"}, "not a job vtrain knows"),
]


@pytest.mark.parametrize(("document", "expected"), BAD_FILES)
def test_a_hand_written_job_that_cannot_run_is_refused_by_submit_and_by_the_rehearsal(
    vtrain: Run, vertex_server: VertexServer, tmp_path: Path, document: object, expected: str
) -> None:
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    platform = (
        "aiplatform"
        if "trainingInput" in document
        # type: ignore[operator]
        else ("kubeflow" if "apiVersion" in document else "vertex")
    )  # type: ignore[operator]
    done = vtrain(
        "submit",
        platform,
        "--job",
        str(path),
        "--project",
        "my-project",
        "--api-endpoint",
        vertex_server.address,
    )
    one_line_error(done, expected)
    assert str(path) in done.err
    assert vertex_server.requests == []
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
    assert rehearsed.returncode == 2, rehearsed.stderr
    assert expected in rehearsed.stderr and "Traceback" not in rehearsed.stderr
    assert not (tmp_path / "out").exists()


def test_job_flags_that_contradict_the_file_are_refused(vtrain: Run, tmp_path: Path) -> None:
    path = tmp_path / "job.json"
    good = chief_of_two()
    good["jobSpec"]["workerPoolSpecs"][0]["replicaCount"] = "1"  # type: ignore[index]
    path.write_text(json.dumps(good))
    one_line_error(
        vtrain("submit", "vertex", "--job", str(path), "--workers", "3", "--project", "p12345"),
        "--workers: the job file says this",
    )
    one_line_error(
        vtrain("submit", "kubeflow", "--job", str(path)),
        "--job: the file is a CustomJob for vertex",
    )


def test_best_measurement_is_refused_for_aiplatform_naming_the_study_file_and_field(
    vtrain: Run, tmp_path: Path
) -> None:
    study = tmp_path / "best.yaml"
    study.write_text(Path(STUDY).read_text() + "measurement_selection_type: BEST_MEASUREMENT\n")
    done = vtrain("render", "aiplatform", "--name", "j", "--study", str(study), *IMAGE, *CMD)
    one_line_error(
        done, f"{study}: measurement_selection_type: AI Platform ranks each trial by its final"
    )
    assert "'BEST_MEASUREMENT'" in done.err and "LAST_MEASUREMENT" in done.err
    # Vertex has the field: the same study renders there, with its selection kept.
    vertex = vtrain(
        "render", "vertex", "--name", "j", "--study", str(study), "--format", "json", *IMAGE, *CMD
    )
    assert vertex.status == 0, vertex.err
    assert json.loads(vertex.out)["studySpec"]["measurementSelectionType"] == "BEST_MEASUREMENT"
    # LAST_MEASUREMENT is what AI Platform does anyway: said explicitly, it is accepted.
    study.write_text(Path(STUDY).read_text() + "measurement_selection_type: LAST_MEASUREMENT\n")
    assert (
        vtrain("render", "aiplatform", "--name", "j", "--study", str(study), *IMAGE, *CMD).status
        == 0
    )
