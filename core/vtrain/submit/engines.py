"""The engines `vtrain submit` knows, and what it calls in each: one explicit table.

Each engine lives in its own folder (`vertex/`, `aiplatform/`, `kubeflow/`);
its rules, which run while the command line is checked, are in
`vtrain.submit.options.RULES`. A new engine is a folder, a row here and there,
and its flags in `vtrain.cli.submit`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from vtrain.submit.aiplatform import gcloud as aiplatform_gcloud
from vtrain.submit.aiplatform import job as aiplatform_job
from vtrain.submit.aiplatform import rehearse as aiplatform_rehearse
from vtrain.submit.aiplatform import render as aiplatform_render
from vtrain.submit.delivery import Delivery, print_document
from vtrain.submit.document import JobDocument
from vtrain.submit.kubeflow import manifest as kubeflow_manifest
from vtrain.submit.kubeflow import rehearse as kubeflow_rehearse
from vtrain.submit.kubeflow import render as kubeflow_render
from vtrain.submit.kubeflow import send as kubeflow_send
from vtrain.submit.options import JobOptions
from vtrain.submit.rehearsal import Rehearsal
from vtrain.submit.vertex import job as vertex_job
from vtrain.submit.vertex import rehearse as vertex_rehearse
from vtrain.submit.vertex import render as vertex_render
from vtrain.submit.vertex import send as vertex_send

Render = Callable[[JobOptions], tuple[str, dict[str, Any]]]
Deliver = Callable[[JobDocument, JobOptions | None, Delivery], int]


def show(job: JobDocument, options: JobOptions | None, delivery: Delivery) -> int:
    """Print the job: the whole document to --output, or with credentials hidden."""
    print_document(delivery, job.document)
    return 0


@dataclass(frozen=True)
class Engine:
    """One platform's functions, as `vtrain submit`, `vtrain render` and the rehearsal call them."""

    render: Render
    """Build and check the job's document from checked options: (kind, document)."""
    recognizes: Callable[[Mapping[str, Any]], bool]
    """True for a job file of this platform (told from the document's shape)."""
    load: Callable[[dict[str, Any], str, str], JobDocument]
    """Check a job file's document: load(document, source, name for a document with none)."""
    shape: str
    """What `recognizes` looks for, in words."""
    rename: Callable[[dict[str, Any], str], dict[str, Any]]
    """A job file's document under the name --name gives."""
    show: Deliver
    """Print the job (render, --dry-run, and a platform that sends nothing)."""
    send: Deliver | None
    """Send the job and say where it went; None: this platform is rendered only."""
    follows: bool
    """Whether --wait can follow a sent job to its end."""
    rehearse: Callable[[JobDocument, list[str], str | None, str], Rehearsal]
    """The local rehearsal of a job document: rehearse(job, local command, trial, output dir)."""


# Job files are told apart in this order: a Kubernetes object first (kind and apiVersion),
# then AI Platform's trainingInput; Vertex's jobSpec and trialJobSpec last.
ENGINES: Mapping[str, Engine] = MappingProxyType(
    {
        "kubeflow": Engine(
            render=kubeflow_render.render,
            recognizes=kubeflow_manifest.recognizes,
            load=kubeflow_manifest.load,
            shape=kubeflow_manifest.SHAPE,
            rename=kubeflow_manifest.rename,
            show=show,
            send=kubeflow_send.submit,
            follows=False,
            rehearse=kubeflow_rehearse.rehearse,
        ),
        "aiplatform": Engine(
            render=aiplatform_render.render,
            recognizes=aiplatform_job.recognizes,
            load=aiplatform_job.load,
            shape=aiplatform_job.SHAPE,
            rename=aiplatform_job.rename,
            show=aiplatform_gcloud.show,
            send=None,
            follows=False,
            rehearse=aiplatform_rehearse.rehearse,
        ),
        "vertex": Engine(
            render=vertex_render.render,
            recognizes=vertex_job.recognizes,
            load=vertex_job.load,
            shape=vertex_job.SHAPE,
            rename=vertex_job.rename,
            show=show,
            send=vertex_send.submit,
            follows=True,
            rehearse=vertex_rehearse.rehearse,
        ),
    }
)
