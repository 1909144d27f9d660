"""`--framework NAME --trainjob`: each framework's TrainJob on its runtime, read back by
kubeflow_trainer_api's models, sent only where the cluster has the runtime; and the
ClusterTrainingRuntimes vtrain brings, printed by `vtrain render kubeflow --runtime NAME`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    TRAINJOB_CRD_PATH,
    KubeServer,
    Result,
    cluster_runtime,
    runtime_path,
    write_kubeconfig,
)

Run = Callable[..., Result]
JOB = ["--name", "fw", "--image", "gcr.io/p/t:1"]
CMD = ["--", "python", "train.py"]
LAYOUT = "VTRAIN_TRAINJOB_LAYOUT"
VTRAIN_HINT = (
    "a cluster admin applies it: vtrain render kubeflow --runtime {0} | kubectl apply -f -"
)
TRAINER_HINT = "the Trainer ships it: install the runtimes of Kubeflow Trainer v2.2.0 or later"


@dataclass(frozen=True)
class Framework:
    """One framework's TrainJob: its count flags, its runtime, numNodes, vtrain's layout (None:
    the Trainer's runtime says each node's part), and the hint a cluster without it gets."""

    name: str
    counts: tuple[str, ...]
    runtime: str
    nodes: int
    layout: dict[str, int] | None
    hint: str

    def argv(self, *extra: str) -> list[str]:
        return ["--framework", self.name, "--trainjob", *self.counts, *JOB, *extra, *CMD]


FRAMEWORKS = [
    Framework("pytorch", ("--workers", "2"), "torch-distributed", 3, None, TRAINER_HINT),
    Framework("xgboost", ("--workers", "2"), "xgboost-distributed", 3, None, TRAINER_HINT),
    Framework(
        "tensorflow",
        ("--workers", "2", "--ps", "1", "--evaluators", "1"),
        "vtrain-tensorflow",
        5,
        {"chief": 1, "worker": 2, "ps": 1, "evaluator": 1, "port": 2222},
        VTRAIN_HINT.format("vtrain-tensorflow"),
    ),
    Framework(
        "mxnet",
        ("--workers", "2", "--ps", "1"),
        "vtrain-mxnet",
        4,
        {"chief": 1, "worker": 2, "ps": 1, "port": 2222},
        VTRAIN_HINT.format("vtrain-mxnet"),
    ),
]
EACH = pytest.mark.parametrize("fw", FRAMEWORKS, ids=[f.name for f in FRAMEWORKS])


def render(vtrain: Run, fw: Framework) -> dict[str, Any]:
    done = vtrain("render", "kubeflow", *fw.argv("--format", "json"))
    assert done.status == 0, done.err
    document: dict[str, Any] = json.loads(done.out)
    return document


def submit(vtrain: Run, server: KubeServer, tmp_path: Path, *args: str) -> Result:
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url)
    return vtrain("submit", "kubeflow", "--kubeconfig", config, "--namespace", "team-a", *args)


@EACH
def test_a_framework_s_trainjob_runs_on_its_runtime(vtrain: Run, fw: Framework) -> None:
    from kubeflow_trainer_api import models

    document = render(vtrain, fw)
    job = models.TrainerV1alpha1TrainJob.from_dict(document)
    assert job is not None and job.to_dict() == document
    ref = job.spec.runtime_ref
    assert (ref.name, ref.kind, ref.api_group) == (
        fw.runtime,
        "ClusterTrainingRuntime",
        "trainer.kubeflow.org",
    )
    assert job.spec.trainer.num_nodes == fw.nodes
    env = {e.name: e.value for e in job.spec.trainer.env or []}
    if fw.layout is None:
        assert LAYOUT not in env, "PET_* and DMLC_* come from the Trainer's own runtime"
    else:
        assert json.loads(env[LAYOUT]) == fw.layout
        assert sum(v for k, v in fw.layout.items() if k != "port") == fw.nodes


@EACH
def test_a_framework_s_trainjob_is_created_where_its_runtime_is(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path, fw: Framework
) -> None:
    kube_server.objects[runtime_path(fw.runtime)] = cluster_runtime(fw.runtime)
    rendered = render(vtrain, fw)
    done = submit(vtrain, kube_server, tmp_path, *fw.argv())
    assert done.status == 0, done.err
    ((method, path, body),) = kube_server.calls
    assert (method, path) == (
        "POST",
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs",
    )
    assert body == {**rendered, "metadata": {**rendered["metadata"], "namespace": "team-a"}}
    assert kube_server.reads == [TRAINJOB_CRD_PATH, runtime_path(fw.runtime)]
    assert done.out.strip() == "team-a/TrainJob/fw"


@EACH
def test_a_framework_s_trainjob_is_refused_without_its_runtime(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path, fw: Framework
) -> None:
    kube_server.objects.pop(runtime_path(fw.runtime), None)
    done = submit(vtrain, kube_server, tmp_path, *fw.argv())
    assert done.status == 2 and len(done.err.strip().splitlines()) == 1, done.err
    assert f"the cluster has no ClusterTrainingRuntime {fw.runtime}. Hint: {fw.hint}" in done.err
    assert "Traceback" not in done.err
    assert kube_server.calls == []


def test_trainjob_runtime_names_another_runtime_and_keeps_the_framework_s_layout(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    counts = ["--workers", "1", "--ps", "1"]
    extra = ["--framework", "tensorflow", "--trainjob", "team-tf", *counts, *JOB]
    done = vtrain("render", "kubeflow", *extra, "--format", "json", *CMD)
    assert done.status == 0, done.err
    trainer = json.loads(done.out)["spec"]["trainer"]
    assert json.loads(done.out)["spec"]["runtimeRef"]["name"] == "team-tf"
    env = {e["name"]: e["value"] for e in trainer["env"]}
    assert json.loads(env[LAYOUT]) == {"chief": 1, "worker": 1, "ps": 1, "port": 2222}
    assert trainer["numNodes"] == 3
    refused = submit(vtrain, kube_server, tmp_path, *extra, *CMD)
    assert refused.status == 2 and "has no ClusterTrainingRuntime team-tf" in refused.err
    assert (
        "apply a ClusterTrainingRuntime team-tf, or name one the cluster has "
        "(kubectl get clustertrainingruntimes)" in refused.err
    )
    kube_server.objects[runtime_path("team-tf")] = cluster_runtime("team-tf")
    assert submit(vtrain, kube_server, tmp_path, *extra, *CMD).status == 0
    assert len(kube_server.calls) == 1


def test_a_runtime_the_user_may_not_read_is_said_and_the_job_sent(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    kube_server.get_statuses[runtime_path("vtrain-mxnet")] = 403
    mxnet = next(f for f in FRAMEWORKS if f.name == "mxnet")
    done = submit(vtrain, kube_server, tmp_path, *mxnet.argv())
    assert done.status == 0, done.err
    assert (
        "cannot read the ClusterTrainingRuntime vtrain-mxnet (403 Forbidden); that the cluster "
        "has it is not checked" in done.err
    )
    assert len(kube_server.calls) == 1


def training_runtime_job(tmp_path: Path) -> str:
    """A hand-written TrainJob on a namespaced TrainingRuntime."""
    document = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "ns-runtime"},
        "spec": {
            "runtimeRef": {"name": "team-torch", "kind": "TrainingRuntime"},
            "trainer": {"image": "gcr.io/p/t:1", "numNodes": 2},
        },
    }
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_a_namespaced_training_runtime_is_looked_for_in_the_job_s_namespace(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    job = training_runtime_job(tmp_path)
    where = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainingruntimes/team-torch"
    refused = submit(vtrain, kube_server, tmp_path, "--job", job)
    assert refused.status == 2, refused.err
    assert "the cluster has no TrainingRuntime team-torch in namespace team-a" in refused.err
    assert kube_server.reads[-1] == where and kube_server.calls == []
    kube_server.objects[where] = {**cluster_runtime("team-torch"), "kind": "TrainingRuntime"}
    assert submit(vtrain, kube_server, tmp_path, "--job", job).status == 0
    assert len(kube_server.calls) == 1


@pytest.mark.parametrize(
    ("name", "framework"), [("vtrain-tensorflow", "tensorflow"), ("vtrain-mxnet", "mxnet")]
)
def test_vtrain_s_runtime_parses_back_into_the_trainer_models(
    vtrain: Run, name: str, framework: str
) -> None:
    from kubeflow_trainer_api import models

    done = vtrain("render", "kubeflow", "--runtime", name, "--format", "json")
    assert done.status == 0, done.err
    document = json.loads(done.out)
    runtime = models.TrainerV1alpha1ClusterTrainingRuntime.from_dict(document)
    node_job = document["spec"]["template"]["spec"]["replicatedJobs"][0]
    pod = node_job["template"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["ports"] == [{"containerPort": 2222}]
    # The models add one default of their own, which the API server would add too.
    pod["containers"][0]["ports"][0]["protocol"] = "TCP"
    assert runtime is not None and runtime.to_dict() == document
    assert runtime.metadata.name == name
    assert runtime.metadata.labels == {"trainer.kubeflow.org/framework": framework}
    (node,) = runtime.spec.template.spec.replicated_jobs
    assert node.name == "node"
    (container,) = node.template.spec.template.spec.containers
    assert [p.container_port for p in container.ports] == [2222]
    env = {e.name: e for e in container.env}
    jobset = env["VTRAIN_JOBSET"].value_from.field_ref.field_path
    assert jobset == "metadata.labels['jobset.sigs.k8s.io/jobset-name']"


def test_a_runtime_vtrain_does_not_bring_is_refused_with_the_choices(vtrain: Run) -> None:
    done = vtrain("render", "kubeflow", "--runtime", "nope")
    assert done.status == 2 and len(done.err.strip().splitlines()) == 1, done.err
    assert "--runtime: not a runtime vtrain brings (got 'nope')" in done.err
    assert "expected vtrain-tensorflow or vtrain-mxnet" in done.err
    assert "the Trainer ships torch-distributed and xgboost-distributed itself" in done.err
