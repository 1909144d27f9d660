"""Sending a job to Vertex AI through the SDK's JobServiceClient, and following it to its end.

Credentials are Application Default Credentials, found by the client itself.
An endpoint on the loopback interface (a local stand-in for the API) is
reached over a plain channel with no credentials, as emulators are.
"""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass
from typing import Any

from vtrain.errors import UsageError, VtrainError
from vtrain.log import logger
from vtrain.redact import redact_text
from vtrain.submit import sdk
from vtrain.submit.delivery import Delivery
from vtrain.submit.document import JobDocument
from vtrain.submit.options import DEFAULT_REGION, JobOptions
from vtrain.submit.vertex.job import CUSTOM_JOB, parse
from vtrain.submit.vertex.staging import stage

# What the SDK's own helpers build (jobs._Job._dashboard_uri, console_utils), for a CustomJob
# and a HyperparameterTuningJob alike (both `_job_type = "training"`); copied, not imported:
# `google.cloud.aiplatform` takes seconds to import. A test compares it with the installed SDK.
CONSOLE = (
    "https://console.cloud.google.com/agent-platform/locations/{location}/training/{job}"
    "?project={project}"
)
log = logger(__name__)
ENDED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED")


@dataclass(frozen=True)
class SentJob:
    """A job Vertex accepted: its resource name, where to see it, and how to ask about it."""

    name: str
    kind: str
    console_url: str
    client: Any


def submit(job: JobDocument, options: JobOptions | None, delivery: Delivery) -> int:
    """Stage a local --python-package, send the job, print its name; follow it with --wait."""
    if not delivery.project:
        raise UsageError(
            "missing",
            source="--project",
            expected="the Google Cloud project id or number to run the job in",
        )
    package = options.python_package if options is not None else None
    if options is not None and package and not package.startswith("gs://"):
        assert options.staging is not None  # the rules refuse a local package without it
        uri = stage(package, options.staging)
        log.info(f"vtrain submit: staged {package} as {uri}")
    sent = send(
        job,
        project=delivery.project,
        region=delivery.region or DEFAULT_REGION,
        endpoint=delivery.api_endpoint,
    )
    delivery.terminal.say(sent.name)
    delivery.terminal.complain(f"vtrain submit: console: {sent.console_url}")
    if delivery.wait:
        return follow(sent, poll=delivery.poll)
    return 0


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
        return api.JobServiceClient(transport=sdk.vertex_grpc_transport(endpoint))
    try:
        return api.JobServiceClient(client_options={"api_endpoint": endpoint})
    except sdk.credentials_error():
        raise VtrainError(
            "no Application Default Credentials",
            source="vtrain submit vertex",
            hint="run `gcloud auth application-default login`, or set "
            "GOOGLE_APPLICATION_CREDENTIALS to a service account key file",
        ) from None


def send(job: JobDocument, *, project: str, region: str, endpoint: str | None = None) -> SentJob:
    """Create the CustomJob or HyperparameterTuningJob; its resource name and console URL."""
    api = sdk.vertex_api()
    refused = sdk.api_exceptions().GoogleAPICallError
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
    except refused as e:
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


def _refused(e: Any) -> VtrainError:
    # The service's message may quote the request: it goes through redact like all output.
    message = redact_text(getattr(e, "message", "") or str(e))
    return VtrainError(
        f"Vertex refused the job: {getattr(e, 'code', '')} {message}".strip(),
        source="vtrain submit vertex",
    )


def follow(sent: SentJob, *, poll: float = 30.0) -> int:
    """Print each state of the job until it ends; 0 when it succeeded, else 1."""
    refused = sdk.api_exceptions().GoogleAPICallError
    get = (
        sent.client.get_custom_job
        if sent.kind == CUSTOM_JOB
        else sent.client.get_hyperparameter_tuning_job
    )
    last = None
    while True:
        try:
            current = get(name=sent.name)
        except refused as e:
            raise _refused(e) from None
        state = current.state.name
        if state != last:
            log.info(f"vtrain submit: {sent.name}: {state}")
            last = state
        if state in ENDED:
            if state != "JOB_STATE_SUCCEEDED" and current.error.message:
                log.warning(f"vtrain submit: {redact_text(current.error.message)}")
            return 0 if state == "JOB_STATE_SUCCEEDED" else 1
        time.sleep(poll)
