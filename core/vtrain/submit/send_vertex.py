"""Sending a job to Vertex AI through the SDK's JobServiceClient, and following it to its end.

Credentials are Application Default Credentials, found by the client itself.
An endpoint on the loopback interface (a local stand-in for the API) is
reached over a plain channel with no credentials, as emulators are.
"""

from __future__ import annotations

import importlib
import ipaddress
import sys
import time
from dataclasses import dataclass
from typing import Any

from vtrain.errors import VtrainError
from vtrain.redact import redact
from vtrain.submit import sdk
from vtrain.submit.job_file import JobDocument
from vtrain.submit.vertex import CUSTOM_JOB

# What the SDK's own helpers build (jobs._Job._dashboard_uri, console_utils), for a CustomJob
# and a HyperparameterTuningJob alike (both `_job_type = "training"`); copied, not imported:
# `google.cloud.aiplatform` takes seconds to import. A test compares it with the installed SDK.
CONSOLE = (
    "https://console.cloud.google.com/agent-platform/locations/{location}/training/{job}"
    "?project={project}"
)
ENDED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")


@dataclass(frozen=True)
class SentJob:
    """A job Vertex accepted: its resource name, where to see it, and how to ask about it."""

    name: str
    kind: str
    console_url: str
    client: Any


def _loopback(endpoint: str) -> bool:
    host = endpoint.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def client(region: str, endpoint: str | None) -> Any:
    """A JobServiceClient for `region` (or `endpoint`)."""
    api = sdk.vertex_api()
    endpoint = endpoint or f"{region}-aiplatform.googleapis.com"
    if _loopback(endpoint):
        grpc = importlib.import_module("grpc")
        transports = importlib.import_module(
            "google.cloud.aiplatform_v1.services.job_service.transports"
        )
        channel = grpc.insecure_channel(endpoint)
        return api.JobServiceClient(transport=transports.JobServiceGrpcTransport(channel=channel))
    from google.auth.exceptions import DefaultCredentialsError

    try:
        return api.JobServiceClient(client_options={"api_endpoint": endpoint})
    except DefaultCredentialsError:
        raise VtrainError(
            "no Application Default Credentials", source="vtrain submit vertex",
            hint="run `gcloud auth application-default login`, or set "
            "GOOGLE_APPLICATION_CREDENTIALS to a service account key file",
        ) from None  # fmt: skip


def send(job: JobDocument, *, project: str, region: str, endpoint: str | None = None) -> SentJob:
    """Create the CustomJob or HyperparameterTuningJob; its resource name and console URL."""
    from google.api_core import exceptions

    from vtrain.submit.vertex import parse

    api = sdk.vertex_api()
    message = parse(job.kind, job.document, source=job.source)
    jobs = client(region, endpoint)
    parent = f"projects/{project}/locations/{region}"
    try:
        if job.kind == CUSTOM_JOB:
            created = jobs.create_custom_job(
                request=api.CreateCustomJobRequest(parent=parent, custom_job=message)
            )
        else:
            created = jobs.create_hyperparameter_tuning_job(
                request=api.CreateHyperparameterTuningJobRequest(
                    parent=parent, hyperparameter_tuning_job=message
                )
            )
    except exceptions.GoogleAPICallError as e:
        raise _refused(e) from None
    return SentJob(created.name, job.kind, console_url(created.name), jobs)


def console_url(resource_name: str) -> str:
    """The console page of ``projects/P/locations/L/customJobs/ID`` (or a tuning job)."""
    # From the name the service returned, as the SDK does: its project is the project number.
    parts = resource_name.split("/")
    fields = dict(zip(parts[0::2], parts[1::2], strict=False))
    return CONSOLE.format(
        location=fields.get("locations", ""), job=parts[-1], project=fields.get("projects", "")
    )


def redact_text(text: str) -> str:
    """A free-text message with every credential-looking word hidden."""
    # redact() reads whole values; a message is words, and "--password x" spans two.
    return " ".join(redact(text.split(" ")))


def _refused(e: Any) -> VtrainError:
    # The service's message may quote the request: it goes through redact like all output.
    message = redact_text(getattr(e, "message", "") or str(e))
    return VtrainError(
        f"Vertex refused the job: {getattr(e, 'code', '')} {message}".strip(),
        source="vtrain submit vertex",
    )


def follow(sent: SentJob, *, poll: float = 30.0) -> int:
    """Print each state of the job until it ends; 0 when it succeeded, else 1."""
    from google.api_core import exceptions

    get = (
        sent.client.get_custom_job
        if sent.kind == CUSTOM_JOB
        else sent.client.get_hyperparameter_tuning_job
    )
    last = None
    while True:
        try:
            current = get(name=sent.name)
        except exceptions.GoogleAPICallError as e:
            raise _refused(e) from None
        state = current.state.name
        if state != last:
            print(f"vtrain submit: {sent.name}: {state}", file=sys.stderr, flush=True)
            last = state
        if state in ENDED:
            if state != "JOB_STATE_SUCCEEDED" and current.error.message:
                print(f"vtrain submit: {redact_text(current.error.message)}", file=sys.stderr)
            return 0 if state == "JOB_STATE_SUCCEEDED" else 1
        time.sleep(poll)
