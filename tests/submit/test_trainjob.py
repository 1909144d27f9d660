"""`--trainjob`: a Kubeflow Trainer v2 TrainJob, read back by kubeflow_trainer_api's models,
created through the kubernetes client, refused where it cannot say a flag, and rehearsed."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    TRAINJOB_CRD_PATH,
    TRAINJOB_SPEC_V2_1,
    KubeServer,
    Result,
    runtime_path,
    trainjob_crd,
    write_kubeconfig,
)
from targets import COMMAND, TARGETS, render_args

Run = Callable[..., Result]
NODE = str(Path(__file__).parent / "replicas" / "torch_node.py")
IMAGE = ["--image", "gcr.io/p/t:1"]
CMD = ["--", "torchrun", "train.py"]
TORCH = runtime_path("torch-distributed")
NO_STATUS = "the cluster's Kubeflow Trainer has no TrainJob status"


def render(vtrain: Run, *extra: str) -> dict[str, Any]:
    done = vtrain(*render_args("trainjob", "json", *extra))
    assert done.status == 0, done.err
    document: dict[str, Any] = json.loads(done.out)
    return document


def test_the_trainjob_parses_back_into_the_trainer_models_unchanged(vtrain: Run) -> None:
    from kubeflow_trainer_api import models

    document = render(vtrain)
    job = models.TrainerV1alpha1TrainJob.from_dict(document)
    assert job is not None and job.to_dict() == document
    assert (job.api_version, job.kind) == ("trainer.kubeflow.org/v1alpha1", "TrainJob")
    spec = job.spec
    assert (spec.runtime_ref.name, spec.runtime_ref.kind) == (
        "torch-distributed",
        "ClusterTrainingRuntime",
    )
    trainer = spec.trainer
    assert trainer.num_nodes == 3, "the chief and --workers 2 are three nodes"
    assert trainer.image == "gcr.io/proj/train:1"
    assert (trainer.command, trainer.args) == (["python"], ["-m", "trainer.task", "--epochs", "3"])
    assert trainer.resources_per_node.limits["nvidia.com/gpu"].actual_instance == "2"
    env = {e.name: e.value for e in trainer.env}
    assert env["MODE"] == "train" and env["AIP_MODEL_DIR"] == "gs://my-bucket/run1/model/"
    assert spec.active_deadline_seconds == 7200
    pod = spec.runtime_patches[0].training_runtime_spec.template.spec.replicated_jobs[0]
    assert pod.name == "node"
    pod_spec = pod.template.spec.template.spec
    assert pod_spec.node_selector == {
        "node.kubernetes.io/instance-type": "n1-standard-8",
        "cloud.google.com/gke-accelerator": "nvidia-tesla-t4",
    }
    assert pod_spec.service_account_name == "trainer"


def test_a_bare_trainjob_names_the_default_runtime_and_no_patches(vtrain: Run) -> None:
    done = vtrain(
        "render", "kubeflow", "--name", "t", "--trainjob", *IMAGE, "--format", "json", *CMD
    )
    assert done.status == 0, done.err
    spec = json.loads(done.out)["spec"]
    assert spec["runtimeRef"]["name"] == "torch-distributed"
    assert spec["trainer"] == {
        "image": "gcr.io/p/t:1",
        "command": ["torchrun"],
        "args": ["train.py"],
        "numNodes": 1,
    }
    assert "runtimePatches" not in spec


def test_the_trainjob_is_created_in_the_trainer_api_group(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    rendered = render(vtrain)
    _, args = TARGETS["trainjob"]
    done = vtrain(
        "submit", "kubeflow", *args, "--kubeconfig", config, "--namespace", "team-a", *COMMAND
    )
    assert done.status == 0, done.err
    ((method, path, body),) = kube_server.calls
    assert (method, path) == (
        "POST",
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs",
    )
    assert body == {**rendered, "metadata": {**rendered["metadata"], "namespace": "team-a"}}
    assert done.out.strip() == "team-a/TrainJob/golden"
    assert "sekret-token-123" not in done.out + done.err
    # The CRD, then the runtime the job names, were read first; Trainer v2.2.0's CRD has status.
    assert kube_server.reads == [TRAINJOB_CRD_PATH, TORCH]
    assert NO_STATUS not in done.err


def test_a_rendered_trainjob_file_is_sent_unchanged(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    job = tmp_path / "job.yaml"
    assert vtrain(*render_args("trainjob", "yaml", "-o", str(job))).status == 0
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    done = vtrain("submit", "kubeflow", "--job", str(job), "--kubeconfig", config)
    assert done.status == 0, done.err
    ((_, path, body),) = kube_server.calls
    assert path.endswith("/namespaces/default/trainjobs")
    assert body == render(vtrain)


REFUSED = [
    (["--trainjob", "--ps", "1", *IMAGE, *CMD], "--ps: a TrainJob's nodes are all trainers"),
    (
        ["--trainjob", "--evaluators", "1", *IMAGE, *CMD],
        "--evaluators: a TrainJob's nodes are all trainers",
    ),
    (
        ["--trainjob", "--workers", "1", "--worker-image", "gcr.io/p/w:1", *IMAGE, *CMD],
        "--worker-image: every node of a TrainJob runs the same trainer",
    ),
    (
        ["--trainjob", "--framework", "pytorch", "--workers", "1", "--ps", "1", *IMAGE, *CMD],
        "--ps: a TrainJob's nodes are all trainers, unless vtrain's layout gives them roles",
    ),
    (
        ["--trainjob", "--framework", "tensorflow", "--ps", "1", *IMAGE, *CMD],
        "--ps: parameter servers serve workers, and the job has none",
    ),
    (["--trainjob", "Torch_Runtime", *IMAGE, *CMD], "--trainjob: not a runtime name"),
]


@pytest.mark.parametrize(("argv", "expected"), REFUSED)
def test_what_a_trainjob_cannot_say_is_refused(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path, argv: list[str], expected: str
) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    done = vtrain("submit", "kubeflow", "--name", "j", "--kubeconfig", config, *argv)
    assert done.status == 2 and len(done.err.strip().splitlines()) == 1, done.err
    assert expected in done.err and "Traceback" not in done.err
    assert kube_server.calls == []


def test_trainjob_is_a_kubeflow_flag(vtrain: Run) -> None:
    done = vtrain("render", "vertex", "--trainjob", *IMAGE, *CMD)
    assert done.status == 2 and "--trainjob: a TrainJob is a Kubeflow job" in done.err


def trainjob(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "x"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, **spec},
    }


BAD_FILES = [
    (trainjob(trainer={"numNode": 2}), "spec.trainer.numNode: unknown field"),
    (trainjob(trainer={"numNodes": "two"}), "not a valid TrainJob"),
    (trainjob(trainer={"numNodes": 0}), "spec.trainer.numNodes: a TrainJob runs at least one"),
    ({**trainjob(), "spec": {"trainer": {}}}, "spec.runtimeRef.name: missing"),
    ({**trainjob(), "apiVersion": "kubeflow.org/v1"}, "apiVersion: wrong apiVersion"),
]


@pytest.mark.parametrize(("document", "expected"), BAD_FILES)
def test_a_hand_written_trainjob_is_checked_by_the_models(
    vtrain: Run, tmp_path: Path, document: dict[str, Any], expected: str
) -> None:
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    done = vtrain("render", "kubeflow", "--job", str(path))
    assert done.status == 2 and expected in done.err, done.err
    assert str(path) in done.err and "Traceback" not in done.err


def test_the_rehearsal_runs_num_nodes_with_the_torch_plugin_env(
    vtrain: Run, tmp_path: Path
) -> None:
    job = tmp_path / "job.yaml"
    assert vtrain(*render_args("trainjob", "yaml", "-o", str(job))).status == 0
    rec, out = tmp_path / "rec", tmp_path / "out"
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
            "--",
            sys.executable,
            NODE,
            str(rec),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "numProcPerNode is unset" in ran.stderr
    records = {p.stem: json.loads(p.read_text()) for p in rec.glob("*.json")}
    assert sorted(records) == ["node-0", "node-1", "node-2"], "numNodes 3: three nodes"
    # Node 0 bound PET_MASTER_ADDR:PET_MASTER_PORT and heard from both other nodes there.
    assert records["node-0"]["heard"] == [1, 2]
    masters = {(r["env"]["PET_MASTER_ADDR"], r["env"]["PET_MASTER_PORT"]) for r in records.values()}
    # Every node meets node-0 at its own address (each replica has one: 127.0.0.2, …).
    assert len(masters) == 1 and next(iter(masters))[0] == "127.0.0.2"
    for name, r in records.items():
        env = r["env"]
        assert env["PET_NNODES"] == "3" and env["PET_NODE_RANK"] == name.split("-")[1]
        assert env["PET_NPROC_PER_NODE"] == "auto"
        assert env["MODE"] == "train"
        assert env["AIP_MODEL_DIR"] == f"{out}/model/", "the folders are this rehearsal's"
        # NODE stands in for the program, `python -m trainer.task`; its args follow.
        assert r["args"] == ["--epochs", "3"]


def test_the_trainjob_checks_the_cluster_has_trainer_2_2_before_sending(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    # Trainer v2.1's CRD: an API server would drop runtimePatches and activeDeadlineSeconds.
    kube_server.objects[TRAINJOB_CRD_PATH] = trainjob_crd(*TRAINJOB_SPEC_V2_1)
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    _, args = TARGETS["trainjob"]
    done = vtrain("submit", "kubeflow", *args, "--kubeconfig", config, *COMMAND)
    assert done.status == 2, done.out
    assert (
        "the cluster's TrainJob CRD has no spec.runtimePatches, spec.activeDeadlineSeconds: its "
        "Kubeflow Trainer is older than v2.2.0" in done.err
    )
    assert "upgrade Kubeflow Trainer to v2.2.0 or later" in done.err
    assert kube_server.calls == [] and kube_server.reads == [TRAINJOB_CRD_PATH]
    # Only what the job uses is asked of the CRD: --timeout alone needs activeDeadlineSeconds.
    kube_server.objects[TRAINJOB_CRD_PATH] = trainjob_crd(*TRAINJOB_SPEC_V2_1, "runtimePatches")
    timeout = vtrain(
        "submit",
        "kubeflow",
        "--name",
        "t",
        "--trainjob",
        "--timeout",
        "1h",
        "--kubeconfig",
        config,
        *IMAGE,
        *CMD,
    )
    assert timeout.status == 2 and "has no spec.activeDeadlineSeconds" in timeout.err
    assert kube_server.calls == []


def test_a_trainjob_without_the_new_fields_is_sent_to_trainer_2_1_with_a_note(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    # Trainer v2.1's CRD: no v2.2.0 spec field is used, but it keeps no trainerStatus either.
    kube_server.objects[TRAINJOB_CRD_PATH] = trainjob_crd(*TRAINJOB_SPEC_V2_1)
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    done = vtrain(
        "submit", "kubeflow", "--name", "t", "--trainjob", "--kubeconfig", config, *IMAGE, *CMD
    )
    assert done.status == 0, done.err
    assert kube_server.reads == [TRAINJOB_CRD_PATH, TORCH] and len(kube_server.calls) == 1
    (note,) = [line for line in done.err.splitlines() if NO_STATUS in line]
    assert "has no status.trainerStatus: feature gate TrainJobStatus, Trainer v2.2.0" in note
    assert "progress and metrics will not show in `kubectl get trainjob`; the job is sent" in note


BARE = ["--name", "t", "--trainjob", *IMAGE, *CMD]


@pytest.mark.parametrize(
    "argv", [[*TARGETS["trainjob"][1], *COMMAND], BARE], ids=["v2.2-fields", "bare"]
)
def test_a_cluster_without_trainer_is_named(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path, argv: list[str]
) -> None:
    kube_server.objects.clear()
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    done = vtrain("submit", "kubeflow", "--kubeconfig", config, *argv)
    assert done.status == 2
    assert "the cluster has no trainjobs.trainer.kubeflow.org CRD" in done.err
    assert "install Kubeflow Trainer v2.2.0 or later" in done.err and kube_server.calls == []
    # Without the CRD, a missing runtime would only mislead: it is not asked for.
    assert kube_server.reads == [TRAINJOB_CRD_PATH]


def test_a_crd_the_user_may_not_read_is_said_and_the_job_sent(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    kube_server.get_status = 403
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    done = vtrain("submit", "kubeflow", *TARGETS["trainjob"][1], "--kubeconfig", config, *COMMAND)
    assert done.status == 0, done.err
    assert "cannot read the trainjobs.trainer.kubeflow.org CRD (403" in done.err
    assert "need Kubeflow Trainer v2.2.0 or later, which is not checked" in done.err
    assert "cannot read the ClusterTrainingRuntime torch-distributed (403" in done.err
    assert len(kube_server.calls) == 1


def test_a_bare_trainjob_on_an_unreadable_crd_says_the_status_is_not_checked(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    kube_server.get_statuses[TRAINJOB_CRD_PATH] = 403
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    done = vtrain("submit", "kubeflow", "--kubeconfig", config, *BARE)
    assert done.status == 0, done.err
    assert (
        "cannot read the trainjobs.trainer.kubeflow.org CRD (403 Forbidden); whether its "
        "Trainer keeps TrainJob status is not checked" in done.err
    )
    assert kube_server.reads == [TRAINJOB_CRD_PATH, TORCH] and len(kube_server.calls) == 1


def test_help_names_the_trainer_version_it_needs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vtrain", "submit", "kubeflow", "--help"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0
    assert "Trainer v2.2.0 or later" in " ".join(done.stdout.split())


def test_a_trainjob_on_spot_tpu_nodes(vtrain: Run) -> None:
    done = vtrain(
        "render",
        "kubeflow",
        "--name",
        "t",
        "--trainjob",
        "--workers",
        "3",
        "--spot",
        "--accelerator",
        "TPU_V5_LITEPOD:4",
        *IMAGE,
        "--format",
        "json",
        *CMD,
    )
    assert done.status == 0, done.err
    spec = json.loads(done.out)["spec"]
    assert spec["trainer"]["resourcesPerNode"] == {"limits": {"google.com/tpu": "4"}}
    pod = spec["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    pod_spec = pod["template"]["spec"]["template"]["spec"]
    assert pod_spec["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "2x2",
        "cloud.google.com/gke-spot": "true",
    }
    assert pod_spec["tolerations"] == [
        {
            "key": "cloud.google.com/gke-spot",
            "operator": "Equal",
            "value": "true",
            "effect": "NoSchedule",
        }
    ]


@pytest.mark.parametrize(
    ("runtime", "said"),
    [
        ("torch-distributed", "numProcPerNode is unset"),
        ("team-runtime", "the runtime team-runtime is not one vtrain knows"),
    ],
)
def test_the_rehearsal_says_what_it_cannot_know_of_the_runtime(runtime: str, said: str) -> None:
    from vtrain.submit.document import JobDocument
    from vtrain.submit.kubeflow.rehearse import rehearse

    document = trainjob(trainer={"numNodes": 2, "command": ["python", "train.py"]})
    document["spec"]["runtimeRef"]["name"] = runtime
    rehearsal = rehearse(JobDocument("kubeflow", "TrainJob", document, "job.yaml"), [], None, "/o")
    assert [n for n in rehearsal.notes if said in n], rehearsal.notes
    assert rehearsal.options["platform"] == "trainjob" and rehearsal.options["workers"] == 1
