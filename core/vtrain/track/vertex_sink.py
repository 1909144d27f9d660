"""The Vertex AI Experiments backend: the job's experiment run, through Vertex's Metadata API.

A CustomJob rendered with `--experiment` makes Vertex give its replicas
AIP_EXPERIMENT_NAME and AIP_EXPERIMENT_RUN_NAME. The leader's sink then opens that
run's context with the API's own client (`aiplatform_v1.MetadataServiceClient`,
the `vertex` extra): it gets it, or makes it (and the experiment's) as the Vertex
SDK does, and writes each batch's params, metric summary and state into its
metadata (`vtrain.track.vertex_rules`). VTRAIN_VERTEX_ENDPOINT names another
endpoint (a loopback one is reached without TLS, as emulators are).
"""

from __future__ import annotations

import importlib
import ipaddress
from collections.abc import Mapping
from typing import Any

from vtrain.errors import MissingExtraError
from vtrain.log import logger
from vtrain.track.records import parse
from vtrain.track.vertex_rules import Summary

EXTRA = "vertex"
ENDPOINT_VARIABLE = "VTRAIN_VERTEX_ENDPOINT"
_V1 = "google.cloud.aiplatform_v1"

log = logger(__name__)


class VertexSink:
    """Writes one attempt's records into the experiment run `run` (a context's name)."""

    def __init__(
        self, contexts: tuple[str, str, str], attempt: int, environ: Mapping[str, str]
    ) -> None:
        self._experiment, self._run, self._run_id = contexts
        self._attempt = attempt
        self._environ = dict(environ)
        self._client: Any = None
        self._summary: Summary | None = None

    def __call__(self, lines: list[bytes]) -> None:
        v1 = api()
        if self._summary is None:
            self._client = self._client or _client(v1, self._environ)
            self._summary = Summary(self._open(v1), self._attempt)
        summary = self._summary
        summary.add(parse(lines))
        context = v1.Context(name=self._run, metadata=summary.metadata())
        self._client.update_context(context=context)

    def _open(self, v1: Any) -> Mapping[str, Any]:
        """The run's metadata: its context's, made first (with the experiment's) if missing."""
        exceptions = importlib.import_module("google.api_core.exceptions")
        try:
            found = self._client.get_context(name=self._run)
        except exceptions.NotFound:
            found = self._make(v1, exceptions)
        log.info(f"vtrain: Vertex AI Experiments run {self._run}")
        return dict(found.metadata or {})

    def _make(self, v1: Any, exceptions: Any) -> Any:
        store = self._run.partition("/contexts/")[0]
        experiment_id = self._experiment.rpartition("/")[2]
        try:
            self._client.get_context(name=self._experiment)
        except exceptions.NotFound:
            experiment = v1.Context(
                display_name=experiment_id,
                schema_title="system.Experiment",
                schema_version="0.0.1",
                metadata={"experiment_deleted": False},
            )
            self._client.create_context(parent=store, context=experiment, context_id=experiment_id)
        run = v1.Context(
            display_name=self._run_id,
            schema_title="system.ExperimentRun",
            schema_version="0.0.1",
            metadata={"_state": "RUNNING"},
        )
        made = self._client.create_context(
            parent=store, context=run, context_id=self._run.rpartition("/")[2]
        )
        self._client.add_context_children(context=self._experiment, child_contexts=[self._run])
        return made


def api() -> Any:
    """`google.cloud.aiplatform_v1`, or the error that names the extra."""
    try:
        return importlib.import_module(_V1)
    except ImportError:
        raise MissingExtraError(
            "Vertex AI Experiments tracking", EXTRA, module="google-cloud-aiplatform"
        ) from None


def _client(v1: Any, environ: Mapping[str, str]) -> Any:
    """The Metadata API's client for the job's region (or VTRAIN_VERTEX_ENDPOINT)."""
    endpoint = (
        environ.get(ENDPOINT_VARIABLE) or f"{environ['CLOUD_ML_REGION']}-aiplatform.googleapis.com"
    )
    if _loopback(endpoint):
        grpc = importlib.import_module("grpc")
        transports = importlib.import_module(f"{_V1}.services.metadata_service.transports")
        channel = grpc.insecure_channel(endpoint)
        return v1.MetadataServiceClient(
            transport=transports.MetadataServiceGrpcTransport(channel=channel)
        )
    return v1.MetadataServiceClient(client_options={"api_endpoint": endpoint})


def _loopback(endpoint: str) -> bool:
    host = endpoint.rpartition(":")[0] or endpoint
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
