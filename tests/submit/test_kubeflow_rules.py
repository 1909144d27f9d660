"""Kubeflow jobs by Kubernetes' rules: DNS-1035 job names, DNS-1123 namespaces, Kubernetes
labels, GKE's accelerator names (GPUs and TPUs), and GKE's spot nodes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import KubeServer, Result, write_kubeconfig

Run = Callable[..., Result]
IMAGE = ["--image", "gcr.io/p/t:1"]
CMD = ["--", "python", "t.py"]
TF = ["--framework", "tensorflow"]


def render(vtrain: Run, *argv: str) -> dict[str, Any]:
    done = vtrain("render", "kubeflow", *argv, "--format", "json", *CMD)
    assert done.status == 0, done.err
    document: dict[str, Any] = json.loads(done.out)
    return document


def pod(document: dict[str, Any], replica: str = "Chief") -> dict[str, Any]:
    specs = document["spec"]["tfReplicaSpecs"]
    spec: dict[str, Any] = specs[replica]["template"]["spec"]
    return spec


REFUSED = [
    (["--name", "1job"], "--name: not a kubeflow job name (got '1job'); expected a DNS-1035 label"),
    (["--name", "job-"], "--name: not a kubeflow job name"),
    (["--name", "j" * 64], "--name: not a kubeflow job name"),
    (
        ["--namespace", "Bad_NS"],
        "--namespace: not a Kubernetes namespace (got 'Bad_NS'); expected a DNS-1123 label",
    ),
    (["--namespace", "n" * 64], "--namespace: not a Kubernetes namespace"),
    (["--label", "a/b/c=1"], "--label: not a label (got 'a/b/c=1'); expected Kubernetes' label"),
    (["--label", "team=-ml"], "--label: not a label"),
    (["--label", f"team={'v' * 64}"], "--label: not a label"),
    (
        ["--accelerator", "nvidia.com/gpu:1"],
        "--accelerator: not an accelerator GKE nodes carry "
        "(got 'nvidia.com/gpu'); expected one of nvidia-tesla-t4",
    ),
    (["--accelerator", "FOO_BAR:1"], "--accelerator: not an accelerator GKE nodes carry"),
    (
        ["--accelerator", "TPU_V3:8"],
        "--accelerator: not an accelerator GKE nodes carry (got 'TPU_V3')",
    ),
    (
        ["--accelerator", "tpu-v5-lite-podslice:3"],
        "--accelerator: a tpu-v5-lite-podslice node holds 1 or 4 or 8 chips",
    ),
    (
        ["--workers", "1", "--ps", "1", "--ps-accelerator", "nvidia-tesla-k80:1"],
        "--ps-accelerator: not an accelerator GKE nodes carry",
    ),
    (["--flex-start"], "--flex-start: only Vertex queues a job for its machines"),
]


@pytest.mark.parametrize(("argv", "expected"), REFUSED)
def test_what_kubernetes_or_gke_refuse_is_refused(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path, argv: list[str], expected: str
) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    name = [] if "--name" in argv else ["--name", "j"]
    done = vtrain("submit", "kubeflow", *TF, *name, *IMAGE, "--kubeconfig", config, *argv, *CMD)
    assert done.status == 2, done.out
    assert expected in done.err and len(done.err.strip().splitlines()) == 1, done.err
    assert kube_server.calls == []


def test_names_namespaces_and_labels_kubernetes_takes(vtrain: Run) -> None:
    document = render(
        vtrain,
        *TF,
        "--name",
        "job-1",
        "--namespace",
        "team-a",
        "--label",
        "app.kubernetes.io/name=Trainer",
        "--label",
        "tier=",
        *IMAGE,
    )
    assert document["metadata"] == {
        "name": "job-1",
        "namespace": "team-a",
        "labels": {"app.kubernetes.io/name": "Trainer", "tier": ""},
    }


def test_google_cloud_labels_keep_google_clouds_rules(vtrain: Run) -> None:
    done = vtrain(
        "render", "vertex", "--name", "j", *IMAGE, "--label", "app.kubernetes.io/name=Trainer", *CMD
    )
    assert done.status == 2 and "--label: not a label" in done.err
    assert "lowercase letters, digits, '_' or '-'" in done.err
    done = vtrain("render", "vertex", "--name", "j", *IMAGE, "--namespace", "team-a", *CMD)
    assert done.status == 2 and "--namespace: only a Kubernetes job has a namespace" in done.err


@pytest.mark.parametrize(
    ("accelerator", "label"),
    [
        ("NVIDIA_TESLA_T4:2", "nvidia-tesla-t4"),
        ("nvidia-tesla-t4:2", "nvidia-tesla-t4"),
        ("NVIDIA_L4:2", "nvidia-l4"),
        ("NVIDIA_A100_80GB:2", "nvidia-a100-80gb"),
        ("nvidia-h100-80gb:2", "nvidia-h100-80gb"),
    ],
)
def test_gpus_by_gke_or_vertex_name(vtrain: Run, accelerator: str, label: str) -> None:
    spec = pod(render(vtrain, *TF, "--name", "j", *IMAGE, "--accelerator", accelerator))
    assert spec["nodeSelector"] == {"cloud.google.com/gke-accelerator": label}
    assert spec["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "2"}}


@pytest.mark.parametrize(
    ("accelerator", "name", "topology"),
    [
        ("TPU_V5_LITEPOD:1", "tpu-v5-lite-podslice", "1x1"),
        ("tpu-v5-lite-podslice:8", "tpu-v5-lite-podslice", "2x4"),
        ("TPU_V4_POD:4", "tpu-v4-podslice", "2x2x1"),
        ("tpu-v6e-slice:4", "tpu-v6e-slice", "2x2"),
    ],
)
def test_tpus_ask_for_google_tpu_and_the_tpu_labels(
    vtrain: Run, accelerator: str, name: str, topology: str
) -> None:
    spec = pod(render(vtrain, *TF, "--name", "j", *IMAGE, "--accelerator", accelerator))
    assert spec["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": name,
        "cloud.google.com/gke-tpu-topology": topology,
    }
    chips = accelerator.rsplit(":", 1)[1]
    assert spec["containers"][0]["resources"] == {"limits": {"google.com/tpu": chips}}


def test_spot_pods_select_spot_nodes_and_tolerate_their_taint(vtrain: Run, tmp_path: Path) -> None:
    argv = [*TF, "--name", "j", "--workers", "2", "--ps", "1", *IMAGE, "--spot"]
    document = render(vtrain, *argv, "--machine-type", "n1-standard-8")
    for replica in ("Chief", "Worker", "PS"):
        spec = pod(document, replica)
        assert spec["nodeSelector"] == {
            "node.kubernetes.io/instance-type": "n1-standard-8",
            "cloud.google.com/gke-spot": "true",
        }
        assert spec["tolerations"] == [
            {
                "key": "cloud.google.com/gke-spot",
                "operator": "Equal",
                "value": "true",
                "effect": "NoSchedule",
            }
        ]
    # The rehearsal of the same manifest says how a reclaim comes and how to rehearse one.
    job = tmp_path / "spot.json"
    assert vtrain("render", "kubeflow", *argv, "--format", "json", "-o", str(job), *CMD).status == 0
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
    assert "a job on Spot VMs: a reclaim sends SIGTERM, then SIGKILL about 30 s later" in (
        done.stderr
    )


def test_a_hand_written_manifest_asks_gke_for_nodes_it_has(vtrain: Run, tmp_path: Path) -> None:
    job = tmp_path / "job.json"
    assert (
        vtrain(
            "render",
            "kubeflow",
            *TF,
            "--name",
            "j",
            *IMAGE,
            "--accelerator",
            "NVIDIA_TESLA_T4:1",
            "--format",
            "json",
            "-o",
            str(job),
            *CMD,
        ).status
        == 0
    )
    document = json.loads(job.read_text())
    # What vtrain rendered before: the resource name where GKE's label value belongs.
    pod(document)["nodeSelector"]["cloud.google.com/gke-accelerator"] = "nvidia.com/gpu"
    job.write_text(json.dumps(document))
    done = vtrain("submit", "kubeflow", "--job", str(job))
    assert done.status == 2
    assert (
        "spec.tfReplicaSpecs.Chief.template.spec.nodeSelector.cloud.google.com/gke-accelerator: "
        "no GKE node carries this (got 'nvidia.com/gpu'); expected one of nvidia-tesla-t4"
    ) in done.err


def test_a_namespace_given_beside_a_job_file_is_checked(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    job = tmp_path / "job.json"
    assert (
        vtrain(
            "render",
            "kubeflow",
            *TF,
            "--name",
            "j",
            *IMAGE,
            "--format",
            "json",
            "-o",
            str(job),
            *CMD,
        ).status
        == 0
    )
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    done = vtrain(
        "submit", "kubeflow", "--job", str(job), "--namespace", "Bad_NS", "--kubeconfig", config
    )
    assert done.status == 2 and "--namespace: not a Kubernetes namespace (got 'Bad_NS')" in done.err
    assert kube_server.calls == []
