"""A CustomJob's Vertex AI Experiments fields, from `--experiment`, `--experiment-run` and
`--tensorboard` (pure).

`experiment` and `experimentRun` name Metadata contexts; Vertex names a run's context
`<experiment>-<run>`. `tensorboard` names a Vertex AI TensorBoard instance, which
Vertex streams the job's AIP_TENSORBOARD_LOG_DIR to: it takes a service account and
a base output directory. A run not named is the job's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from vtrain.submit.problems import Problems
from vtrain.submit.request import JobRequest

# Vertex's rule for an experiment's and a run's name (aiplatform's metadata resource ids).
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,127}")
NAME_SAYS = "lowercase letters, digits and '-', starting with a letter or digit, at most 128"
TENSORBOARD = re.compile(r"projects/[^/]+/locations/[^/]+/tensorboards/[^/]+|[0-9]+")
METADATA = "metadataStores/default/contexts"


def check(request: JobRequest, problems: Problems) -> None:
    """Add what is wrong with the request's experiment flags to `problems`."""
    if request.experiment is not None and not NAME.fullmatch(request.experiment):
        problems.bad("--experiment", "not an experiment name", request.experiment, NAME_SAYS)
    if request.experiment_run is not None:
        if request.experiment is None:
            problems.bad(
                "--experiment-run",
                "a run belongs to an experiment",
                request.experiment_run,
                "--experiment NAME beside it",
            )
        if not NAME.fullmatch(request.experiment_run):
            problems.bad("--experiment-run", "not a run name", request.experiment_run, NAME_SAYS)
    if (request.experiment or request.tensorboard) and not request.project:
        problems.bad(
            "--experiment" if request.experiment else "--tensorboard",
            "its resource name holds the project",
            None,
            "--project beside it",
        )
    if request.tensorboard is not None:
        if not TENSORBOARD.fullmatch(request.tensorboard):
            problems.bad(
                "--tensorboard",
                "not a Vertex AI TensorBoard",
                request.tensorboard,
                "projects/P/locations/L/tensorboards/ID, or its numeric ID",
            )
        if not request.service_account:
            problems.bad(
                "--tensorboard",
                "Vertex uploads a job's TensorBoard logs as its service account only",
                request.tensorboard,
                "--service-account EMAIL beside it",
            )
        if not request.output_dir:
            problems.bad(
                "--tensorboard",
                "Vertex streams AIP_TENSORBOARD_LOG_DIR, which a base output folder gives",
                request.tensorboard,
                "--output-dir gs://BUCKET/PATH beside it",
            )


def fields(
    project: str | None,
    region: str,
    job_name: str,
    experiment: str | None,
    run: str | None,
    tensorboard: str | None,
) -> Mapping[str, str]:
    """The CustomJobSpec's `experiment`, `experimentRun` and `tensorboard`, those that are set."""
    found: dict[str, str] = {}
    where = f"projects/{project}/locations/{region}"
    if experiment is not None:
        found["experiment"] = f"{where}/{METADATA}/{experiment}"
        found["experimentRun"] = f"{where}/{METADATA}/{experiment}-{run or run_of(job_name)}"
    if tensorboard is not None:
        found["tensorboard"] = (
            tensorboard if "/" in tensorboard else f"{where}/tensorboards/{tensorboard}"
        )
    return found


def run_of(job_name: str) -> str:
    """The run of a job that names none: its name, as an experiment run's name goes."""
    name = re.sub(r"[^a-z0-9-]+", "-", job_name.lower()).strip("-")[:128]
    return name or "run"
