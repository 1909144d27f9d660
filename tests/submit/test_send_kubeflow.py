"""`vtrain submit kubeflow` through the kubernetes client's CustomObjectsApi, to a local server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import KubeServer, Result, write_kubeconfig
from targets import COMMAND, TARGETS

Run = Callable[..., Result]


@pytest.mark.parametrize(
    ("target", "plural"),
    [("tfjob", "tfjobs"), ("pytorchjob", "pytorchjobs"), ("xgboostjob", "xgboostjobs")],
)
def test_the_manifest_is_created_in_the_namespace(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path, target: str, plural: str
) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    _, args = TARGETS[target]
    rendered = json.loads(vtrain("render", "kubeflow", *args, "--format", "json", *COMMAND).out)
    done = vtrain(
        "submit", "kubeflow", *args, "--kubeconfig", config, "--namespace", "team-a", *COMMAND
    )
    assert done.status == 0, done.err
    ((method, path, body),) = kube_server.calls
    assert (method, path) == ("POST", f"/apis/kubeflow.org/v1/namespaces/team-a/{plural}")
    assert body == {**rendered, "metadata": {**rendered["metadata"], "namespace": "team-a"}}
    assert done.out.strip() == f"team-a/{rendered['kind']}/golden"
    assert "sekret-token-123" not in done.out + done.err


def test_a_refusal_from_the_cluster_is_one_line(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    kube_server.status = 403
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    done = vtrain("submit", "kubeflow", *TARGETS["tfjob"][1], "--kubeconfig", config, *COMMAND)
    assert done.status == 2
    assert done.err.count("\n") == 1 and "403" in done.err and "Traceback" not in done.err


def test_a_missing_kubeconfig_is_named(vtrain: Run, tmp_path: Path) -> None:
    done = vtrain(
        "submit", "kubeflow", *TARGETS["tfjob"][1], "--kubeconfig", str(tmp_path / "nope"), *COMMAND
    )
    assert done.status == 2 and "--kubeconfig: cannot use the kubeconfig" in done.err
