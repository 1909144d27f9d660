"""Fixtures of the submit tests: the CLI in-process, a study file, and local stand-ins for the APIs.

The Vertex stand-in is a real gRPC server on 127.0.0.1 built from the SDK's own
protos; the Kubernetes stand-in is a small HTTP server that records each call.
Both only listen on loopback; nothing here reaches Google or a cluster.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from watchdogs import _stop_the_watchdog_a_test_started  # noqa: F401  (autouse)

from vtrain.cli import main

HERE = Path(__file__).parent


def _core_fixtures() -> Any:
    """tests/core/conftest.py, loaded by path: its conftest module name is taken by this one."""
    spec = importlib.util.spec_from_file_location(
        "vtrain_core_fixtures", HERE.parent / "core" / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Its dataclasses look their module up in sys.modules while the module runs.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# The core tests' real GCS emulator on a free loopback port, started and stopped the same way.
gcs_emulator = _core_fixtures().gcs_emulator
STUDY = """\
metrics:
  - metric_id: loss
    goal: MINIMIZE
parameters:
  - parameter_id: learning_rate
    double_value_spec: {min_value: 0.0001, max_value: 0.1}
    scale_type: UNIT_LOG_SCALE
  - parameter_id: layers
    integer_value_spec: {min_value: 1, max_value: 4}
  - parameter_id: batch_size
    discrete_value_spec: {values: [16, 32, 64]}
  - parameter_id: optimizer
    categorical_value_spec: {values: [adam, sgd]}
algorithm: RANDOM_SEARCH
max_trial_count: 20
parallel_trial_count: 4
max_failed_trial_count: 3
"""


@dataclass
class Result:
    """What one `vtrain` command did: exit status and what it printed."""

    status: int
    out: str
    err: str


@pytest.fixture
def study_file(tmp_path: Path) -> str:
    """The study file `vtrain tune` runs, written to a temp folder."""
    path = tmp_path / "study.yaml"
    path.write_text(STUDY)
    return str(path)


@pytest.fixture
def vtrain(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Run `vtrain ARGS` in this process; no exception may escape it. Its `err` is stderr as a
    terminal shows it, vtrain's log lines included (the command's own console shows them)."""

    def run(*args: str) -> Result:
        capsys.readouterr()
        status = main(list(args))
        captured = capsys.readouterr()
        return Result(status, captured.out, captured.err)

    return run


@dataclass
class VertexServer:
    """A JobService on loopback: records requests, answers from `states` on each Get."""

    address: str
    requests: list[tuple[str, Any]] = field(default_factory=list)
    states: list[str] = field(default_factory=lambda: ["JOB_STATE_PENDING"])
    error: str = ""


@pytest.fixture
def vertex_server() -> Iterator[VertexServer]:
    """A gRPC server that speaks google.cloud.aiplatform.v1.JobService, from the SDK's protos."""
    import grpc
    from google.cloud import aiplatform_v1 as v1

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    port = server.add_insecure_port("127.0.0.1:0")
    state = VertexServer(address=f"127.0.0.1:{port}")
    gets = {"n": 0}

    def created(kind: str, job: Any, request: Any) -> Any:
        state.requests.append((kind, request))
        job.name = f"{request.parent}/{kind}/4242"
        job.state = v1.JobState.JOB_STATE_PENDING
        return job

    def get(job_class: Any, request: Any, context: Any) -> Any:
        state.requests.append(("get", request))
        i = min(gets["n"], len(state.states) - 1)
        gets["n"] += 1
        job = job_class(name=request.name, state=v1.JobState[state.states[i]])
        if state.error and state.states[i] == "JOB_STATE_FAILED":
            job.error.message = state.error
        return job

    unary = grpc.unary_unary_rpc_method_handler
    handlers = {
        "CreateCustomJob": unary(
            lambda r, c: created("customJobs", v1.CustomJob(r.custom_job), r),
            request_deserializer=v1.CreateCustomJobRequest.deserialize,
            response_serializer=v1.CustomJob.serialize,
        ),
        "CreateHyperparameterTuningJob": unary(
            lambda r, c: created(
                "hyperparameterTuningJobs",
                v1.HyperparameterTuningJob(r.hyperparameter_tuning_job),
                r,
            ),
            request_deserializer=v1.CreateHyperparameterTuningJobRequest.deserialize,
            response_serializer=v1.HyperparameterTuningJob.serialize,
        ),
        "GetCustomJob": unary(
            lambda r, c: get(v1.CustomJob, r, c),
            request_deserializer=v1.GetCustomJobRequest.deserialize,
            response_serializer=v1.CustomJob.serialize,
        ),
        "GetHyperparameterTuningJob": unary(
            lambda r, c: get(v1.HyperparameterTuningJob, r, c),
            request_deserializer=v1.GetHyperparameterTuningJobRequest.deserialize,
            response_serializer=v1.HyperparameterTuningJob.serialize,
        ),
    }
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("google.cloud.aiplatform.v1.JobService", handlers),)
    )
    server.start()
    try:
        yield state
    finally:
        server.stop(grace=None)


@dataclass
class KubeServer:
    """A Kubernetes API stand-in on loopback: records every write, answers creates with 201.

    A read (GET) is recorded in `reads`, and answered with the object `objects` holds at its
    path (404 without one), or with `get_status` when that is set, or with the status
    `get_statuses` holds for its path. It holds the TrainJob CRD of Kubeflow Trainer v2.2.0
    and the torch-distributed ClusterTrainingRuntime from the start.
    """

    url: str
    calls: list[tuple[str, str, Any]] = field(default_factory=list)
    status: int = 201
    objects: dict[str, Any] = field(default_factory=dict)
    get_status: int | None = None
    reads: list[str] = field(default_factory=list)
    get_statuses: dict[str, int] = field(default_factory=dict)


TRAINJOB_CRD_PATH = (
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/trainjobs.trainer.kubeflow.org"
)
# TrainJob's spec fields in Trainer v2.1.0; v2.2.0 adds runtimePatches and activeDeadlineSeconds.
TRAINJOB_SPEC_V2_1 = (
    "runtimeRef",
    "trainer",
    "initializer",
    "labels",
    "annotations",
    "podSpecOverrides",
    "suspend",
    "managedBy",
)


# TrainJob's status fields in Trainer v2.1.0; v2.2.0 adds trainerStatus (gate TrainJobStatus).
TRAINJOB_STATUS_V2_1 = ("conditions", "jobsStatus")


def trainjob_crd(*spec_fields: str, trainer_status: bool = False) -> dict[str, Any]:
    """The TrainJob CRD of a cluster whose TrainJob spec has `spec_fields`, and whose status
    has trainerStatus when `trainer_status`."""
    properties = {name: {"type": "object"} for name in spec_fields}
    status_fields = (*TRAINJOB_STATUS_V2_1, *(["trainerStatus"] if trainer_status else []))
    status = {name: {"type": "object"} for name in status_fields}
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": properties},
            "status": {"type": "object", "properties": status},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "trainjobs.trainer.kubeflow.org"},
        "spec": {
            "group": "trainer.kubeflow.org",
            "names": {"kind": "TrainJob", "plural": "trainjobs"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def runtime_path(name: str) -> str:
    """Where the API server answers for the ClusterTrainingRuntime `name`."""
    return f"/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/{name}"


def cluster_runtime(name: str) -> dict[str, Any]:
    """A ClusterTrainingRuntime `name`, as a cluster holds it (submit reads only that it is)."""
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": name},
        "spec": {"mlPolicy": {"numNodes": 1}},
    }


@pytest.fixture
def kube_server(tmp_path: Path) -> Iterator[KubeServer]:
    """An HTTP server that answers the CustomObjectsApi's create call, and a kubeconfig for it."""
    calls: list[tuple[str, str, Any]] = []
    holder: dict[str, KubeServer] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server spelling)
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"null")
            calls.append(("POST", self.path, body))
            status = holder["s"].status
            answer = body if status < 300 else {"kind": "Status", "message": "denied"}
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (the http.server spelling)
            state = holder["s"]
            state.reads.append(self.path)
            found = state.objects.get(self.path)
            status = (
                state.get_status
                or state.get_statuses.get(self.path)
                or (200 if found is not None else 404)
            )
            answer = found if status == 200 else {"kind": "Status", "code": status}
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # shutdown() waits for the loop's next poll: 0.5 s by default, at every test's end.
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state = KubeServer(url=f"http://127.0.0.1:{httpd.server_address[1]}", calls=calls)
    state.objects[TRAINJOB_CRD_PATH] = trainjob_crd(
        *TRAINJOB_SPEC_V2_1, "runtimePatches", "activeDeadlineSeconds", trainer_status=True
    )
    state.objects[runtime_path("torch-distributed")] = cluster_runtime("torch-distributed")
    holder["s"] = state
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def write_kubeconfig(path: Path, server: str) -> str:
    """A kubeconfig whose current context is `server`, with a token that must never be printed."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "local", "cluster": {"server": server}}],
        "users": [{"name": "me", "user": {"token": "sekret-token-123"}}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": "me"}}],
        "current-context": "local",
    }
    path.write_text(json.dumps(config))
    return str(path)
