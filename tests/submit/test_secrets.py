"""Secrets under harmless names: hidden wherever vtrain shows a job (renders, refusals, notes),
and sent intact. Each one has the shape its issuer gives it, which is how it is recognised."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import KubeServer, Result, VertexServer, write_kubeconfig

Run = Callable[..., Result]
IMAGE = ["--image", "gcr.io/p/t:1"]
CMD = ["--", "python", "t.py"]
# name -> a value of that credential's shape, under a name no secret word is in.
SHAPED = {
    "GITHUB_PAT": "ghp_Zq1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT1uV2",
    "FINE_GRAINED": "github_pat_11AAAAAAA0Zq_x1y2z3w4v5u6t7s8r9q0p",
    "MAPS": "AIzaSyZq-1234567890abcdefghijklmnopqrs",
    "AWS_ID": "AKIAZQ1234567890ABCD",
    "SESSION": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJacSJ9.Zq-signature_value",
    "SAS": "sv=2022-11-02&ss=b&srt=o&sig=Zq%2Bsignature%3D&se=2030-01-01",
    "SIGNED_URL": "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256"
    "&X-Goog-Signature=Zq0123456789abcdef",
    "CERT": "-----BEGIN PRIVATE KEY-----\nMIIEvZqSECRET\n-----END PRIVATE KEY-----",
}
# The part of each value that must never be shown.
HIDDEN_PART = {
    "GITHUB_PAT": "Zq1aB2cD3eF4",
    "FINE_GRAINED": "0Zq_x1y2",
    "MAPS": "Zq-123456",
    "AWS_ID": "AKIAZQ1234",
    "SESSION": "Zq-signature_value",
    "SAS": "Zq%2Bsignature",
    "SIGNED_URL": "Zq0123456789",
    "CERT": "MIIEvZqSECRET",
}


def env_flags() -> list[str]:
    return [a for name, value in SHAPED.items() for a in ("--env", f"{name}={value}")]


def never_shown(*texts: str) -> None:
    for text in texts:
        for name, part in HIDDEN_PART.items():
            assert part not in text, f"{name} shown: {text[:300]}"


def test_a_rendered_job_hides_shaped_secrets_and_the_file_keeps_them(
    vtrain: Run, tmp_path: Path
) -> None:
    done = vtrain(
        "render",
        "vertex",
        "--name",
        "s",
        *IMAGE,
        *env_flags(),
        "--format",
        "json",
        *CMD,
        f"--token-in-args={SHAPED['SESSION']}",
    )
    assert done.status == 0, done.err
    never_shown(done.out, done.err)
    shown = json.loads(done.out)  # still JSON: a hidden value keeps its quotes
    env = shown["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"]
    assert [e["name"] for e in env] == list(SHAPED)
    assert all("***" in e["value"] for e in env)
    out = tmp_path / "job.json"
    written = vtrain(
        "render",
        "vertex",
        "--name",
        "s",
        *IMAGE,
        *env_flags(),
        "--format",
        "json",
        "-o",
        str(out),
        *CMD,
    )
    assert written.status == 0, written.err
    never_shown(written.out, written.err)
    whole = json.loads(out.read_text())
    sent = {
        e["name"]: e["value"]
        for e in whole["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"]
    }
    assert sent == SHAPED


def test_shaped_secrets_reach_vertex_intact(vtrain: Run, vertex_server: VertexServer) -> None:
    done = vtrain(
        "submit",
        "vertex",
        "--name",
        "s",
        *IMAGE,
        *env_flags(),
        "--project",
        "p12345",
        "--api-endpoint",
        vertex_server.address,
        *CMD,
    )
    assert done.status == 0, done.err
    never_shown(done.out, done.err)
    container = vertex_server.requests[0][1].custom_job.job_spec.worker_pool_specs[0].container_spec
    assert {e.name: e.value for e in container.env} == SHAPED


def test_shaped_secrets_reach_the_cluster_intact(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    done = vtrain(
        "submit",
        "kubeflow",
        "--framework",
        "pytorch",
        "--name",
        "s",
        *IMAGE,
        *env_flags(),
        "--kubeconfig",
        config,
        *CMD,
    )
    assert done.status == 0, done.err
    never_shown(done.out, done.err)
    ((_, _, body),) = kube_server.calls
    container = body["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
    assert {e["name"]: e["value"] for e in container["env"]} == SHAPED


# Refusals: each quotes what it refuses, and none may quote a secret.
REFUSALS = [
    (
        "aiplatform",
        ["--env", "DB_PASSWORD=hunter2", "--env", f"GITHUB_PAT={SHAPED['GITHUB_PAT']}"],
        "--env: AI Platform's trainingInput has no environment (got ['DB_PASSWORD', 'GITHUB_PAT'])",
        ["hunter2"],
    ),
    ("vertex", ["--env", SHAPED["GITHUB_PAT"]], "--env: not NAME=VALUE", []),
    ("vertex", ["--env", f"TF_CONFIG={SHAPED['AWS_ID']}"], "--env: the platform sets", []),
    ("vertex", ["--label", f"k={SHAPED['AWS_ID']}"], "--label: not a label", []),
    (
        "kubeflow",
        ["--framework", "pytorch", "--label", f"a/b/c={SHAPED['MAPS']}"],
        "--label: not a label",
        [],
    ),
    (
        "aiplatform",
        ["--flags-only", "--", f"{SHAPED['SIGNED_URL']}", "x"],
        "COMMAND: gcloud flags pass arguments to the image's ENTRYPOINT only",
        [],
    ),
    (
        "vertex",
        ["--output-dir", f"https://u:hunter2@host/x?sig={HIDDEN_PART['SAS']}"],
        "--output-dir: not a Cloud Storage URI",
        ["hunter2"],
    ),
]


@pytest.mark.parametrize(("platform", "argv", "expected", "also_hidden"), REFUSALS)
def test_a_refusal_never_shows_a_secret(
    vtrain: Run, platform: str, argv: list[str], expected: str, also_hidden: list[str]
) -> None:
    command = [] if "--" in argv else CMD
    done = vtrain("render", platform, "--name", "j", *IMAGE, *argv, *command)
    assert done.status == 2, done.out + done.err
    assert expected in done.err, done.err
    never_shown(done.err)
    for secret in also_hidden:
        assert secret not in done.err


def test_a_hand_written_job_that_is_refused_does_not_quote_its_secrets(
    vtrain: Run, tmp_path: Path
) -> None:
    # The SDK's parser quotes the value it cannot read; vtrain passes its message on.
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": SHAPED["GITHUB_PAT"],
        "containerSpec": {"imageUri": "gcr.io/p/t:1"},
    }
    path = tmp_path / "job.json"
    path.write_text(json.dumps({"displayName": "x", "jobSpec": {"workerPoolSpecs": [pool]}}))
    done = vtrain("submit", "vertex", "--job", str(path), "--project", "p12345")
    assert done.status == 2 and "not a valid CustomJob" in done.err, done.err
    assert "***" in done.err
    never_shown(done.out, done.err)
