"""Vertex's rules for a command line: job names, Reduction Server, pre-built containers, scheduling,
Experiments.

What only Vertex has (a Reduction Server, restarting the whole job,
pre-built containers, flex-start) is refused on the other platforms from here.
The machines and accelerators a pool may pair are checked when the job is
rendered (`machines`), with the enums of the installed SDK.
"""

from __future__ import annotations

import re

from vtrain.errors import VtrainError
from vtrain.submit import experiment
from vtrain.submit.problems import Problems, Rules
from vtrain.submit.request import JobRequest
from vtrain.submit.vertex.staging import planned_uri
from vtrain.tune.study import Study

DEFAULT_MACHINE = "n1-standard-4"
NAME = re.compile(r"\S.{0,127}")
NAME_SAYS = "1 to 128 characters"


def check(request: JobRequest, study: Study | None, problems: Problems) -> None:
    """Refuse what a CustomJob cannot run."""
    if request.name is not None:
        problems.job_name(request.name, NAME, NAME_SAYS)
    problems.cloud_storage(request.output_dir)
    if request.reduction_servers and request.ps:
        problems.bad(
            "--reduction-servers",
            "Vertex's pool 2 holds parameter servers or a Reduction Server, not both",
            {"ps": request.ps, "reduction_servers": request.reduction_servers},
            "--ps or --reduction-servers",
        )
    if request.reduction_servers < 0:
        problems.bad(
            "--reduction-servers", "cannot be negative", request.reduction_servers, "0 or more"
        )
    if not request.reduction_servers:  # else --ps is refused already, for that
        problems.ps_need_workers(request)
    _scheduling(request, problems)
    _python_package(request, problems)
    experiment.check(request, problems)


def _scheduling(request: JobRequest, problems: Problems) -> None:
    """--spot or --flex-start (one strategy per job); --max-wait only with --flex-start."""
    if request.spot and request.flex_start:
        problems.bad(
            "--flex-start",
            "a job has one scheduling strategy",
            "--spot --flex-start",
            "--spot or --flex-start",
        )
    if request.max_wait is not None and not request.flex_start:
        problems.bad(
            "--max-wait",
            "only a flex-start job waits for its machines",
            request.max_wait,
            "--flex-start beside --max-wait",
        )


def elsewhere(request: JobRequest, problems: Problems) -> None:
    """Refuse Vertex's own options on another platform."""
    problems.refuse(
        "--reduction-servers", request.reduction_servers, "only Vertex runs a Reduction Server"
    )
    problems.refuse(
        "--restart-job-on-worker-restart",
        request.restart_job,
        "only Vertex restarts a whole job when one replica restarts",
    )
    why = "only Vertex AI Experiments and TensorBoard take a job's run"
    problems.refuse("--experiment", request.experiment, why)
    problems.refuse("--experiment-run", request.experiment_run, why)
    problems.refuse("--tensorboard", request.tensorboard, why)
    why = "only Vertex queues a job for its machines (scheduling strategy FLEX_START)"
    problems.refuse("--flex-start", request.flex_start, why)
    problems.refuse("--max-wait", request.max_wait, why)
    if request.python_package or request.python_module or request.executor_image:
        problems.bad(
            "--python-package",
            "only Vertex runs pre-built containers",
            request.python_package,
            "vertex",
        )


def _python_package(request: JobRequest, problems: Problems) -> None:
    """--python-package, --python-module and --executor-image: all three, and nothing else."""
    package, module, executor = (
        request.python_package,
        request.python_module,
        request.executor_image,
    )
    if not (package or module or executor):
        return
    for flag, value in (
        ("--python-package", package),
        ("--python-module", module),
        ("--executor-image", executor),
    ):
        if not value:
            problems.bad(
                flag,
                "missing",
                None,
                "--python-package, --python-module and --executor-image together",
            )
    if request.image:
        problems.bad(
            "--image",
            "a pre-built container job runs --executor-image",
            request.image,
            "no --image with --python-package",
        )
    if request.command:
        problems.bad(
            "COMMAND",
            "the executor runs `python -m MODULE ARGS`",
            request.command[0],
            "-- --flag ... (the module's arguments only)",
        )
    if not package or package.startswith("gs://"):
        return
    staging = request.staging
    if not staging or not staging.startswith("gs://"):
        problems.bad(
            "--staging",
            "a local package must be staged to Cloud Storage",
            staging,
            "gs://BUCKET/PATH",
        )
        return
    # Built now, once: a package that does not build is refused before anything is sent,
    # and the URI the render shows is the one a real submit uploads.
    try:
        planned_uri(package, staging)
    except VtrainError as e:
        problems.add(e)


RULES = Rules(check=check, elsewhere=elsewhere, default_machine=DEFAULT_MACHINE, restarts_jobs=True)
