"""`handle.track` into a Vertex AI Experiments run, through the Metadata API's own client.

A MetadataService stand-in on loopback speaks the API's gRPC wire format (the
messages of google-cloud-aiplatform's protos) and keeps contexts as Vertex does:
get, create, update, add children. The leader's Track gets what Vertex gives a job
rendered with `--experiment` (AIP_EXPERIMENT_NAME, AIP_EXPERIMENT_RUN_NAME, the
project and region), tracks two attempts with a resume between them, and the
run's context then holds the params, the metric summary (the later attempt's value
at a redone step), the resume and the state.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import pytest

from vtrain.storage import open_location
from vtrain.track import Track
from vtrain.track.sinks import made

PROJECT, REGION = "my-proj", "europe-west4"
STORE = f"projects/{PROJECT}/locations/{REGION}/metadataStores/default"


@pytest.fixture
def metadata_server() -> Iterator[tuple[str, dict[str, Any], list[tuple[str, str]]]]:
    """google.cloud.aiplatform.v1.MetadataService on loopback: its contexts, and the children."""
    import grpc
    from google.cloud import aiplatform_v1 as v1

    contexts: dict[str, Any] = {}
    children: list[tuple[str, str]] = []
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    port = server.add_insecure_port("127.0.0.1:0")

    def get(request: Any, context: Any) -> Any:
        if request.name not in contexts:
            context.abort(grpc.StatusCode.NOT_FOUND, f"{request.name} not found")
        return contexts[request.name]

    def create(request: Any, context: Any) -> Any:
        name = f"{request.parent}/contexts/{request.context_id}"
        if name in contexts:
            context.abort(grpc.StatusCode.ALREADY_EXISTS, name)
        contexts[name] = v1.Context(request.context, name=name)
        return contexts[name]

    def update(request: Any, context: Any) -> Any:
        if request.context.name not in contexts:
            context.abort(grpc.StatusCode.NOT_FOUND, request.context.name)
        contexts[request.context.name].metadata = request.context.metadata
        return contexts[request.context.name]

    def add(request: Any, context: Any) -> Any:
        children.extend((request.context, c) for c in request.child_contexts)
        return v1.AddContextChildrenResponse()

    unary = grpc.unary_unary_rpc_method_handler
    rpcs = {
        "GetContext": (get, v1.GetContextRequest, v1.Context),
        "CreateContext": (create, v1.CreateContextRequest, v1.Context),
        "UpdateContext": (update, v1.UpdateContextRequest, v1.Context),
        "AddContextChildren": (add, v1.AddContextChildrenRequest, v1.AddContextChildrenResponse),
    }
    handlers = {
        name: unary(f, request_deserializer=req.deserialize, response_serializer=res.serialize)
        for name, (f, req, res) in rpcs.items()
    }
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "google.cloud.aiplatform.v1.MetadataService", handlers
            ),
        )
    )
    server.start()
    try:
        yield f"127.0.0.1:{port}", contexts, children
    finally:
        server.stop(grace=None)


def _track(folder: Path, environ: dict[str, str]) -> Track:
    run = "job-1"
    return Track(
        leader=True,
        run=run,
        folder=lambda: open_location(str(folder / run)),
        backends=made(("vertex",), run, lambda: open_location(str(folder)), environ),
    )


def test_two_attempts_fill_one_experiment_run(
    tmp_path: Path, metadata_server: tuple[str, dict[str, Any], list[tuple[str, str]]]
) -> None:
    endpoint, contexts, children = metadata_server
    environ = {
        "AIP_EXPERIMENT_NAME": "churn",
        "AIP_EXPERIMENT_RUN_NAME": f"{STORE}/contexts/churn-nightly",
        "CLOUD_ML_PROJECT_ID": PROJECT,
        "CLOUD_ML_REGION": REGION,
        "VTRAIN_VERTEX_ENDPOINT": endpoint,
    }
    first = _track(tmp_path, environ)
    first.params({"lr": 0.1, "api_token": "s3cret"})
    for step in range(1, 31):
        first.metrics({"loss": 1.0 / step}, step=step)
    first.close(ok=False)  # killed, as far as the run is concerned

    second = _track(tmp_path, environ)
    second.resumed(20, None)
    for step in range(21, 41):
        second.metrics({"loss": 2.0 / step}, step=step)
    second.close(ok=True)

    run = contexts[f"{STORE}/contexts/churn-nightly"]
    assert run.schema_title == "system.ExperimentRun"
    assert (f"{STORE}/contexts/churn", run.name) in children
    assert contexts[f"{STORE}/contexts/churn"].schema_title == "system.Experiment"
    metadata = dict(run.metadata)
    params, metrics = dict(metadata["_params"]), dict(metadata["_metrics"])
    assert params["lr"] == "0.1" and params["api_token"] == "***"
    assert params["vtrain.attempt-2.resumed_step"] == 20
    assert metrics["loss"] == pytest.approx(2.0 / 40) and metrics["vtrain.attempt"] == 2
    assert metadata["_state"] == "COMPLETE"


def test_without_the_run_vertex_names_it_says_so_and_the_loop_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    track = _track(tmp_path, {"AIP_EXPERIMENT_NAME": "churn"})
    track.metrics({"loss": 1.0}, step=1)
    track.close()
    assert "AIP_EXPERIMENT_RUN_NAME" in caplog.text
    assert (tmp_path / "job-1" / "attempt-1.jsonl").exists()
