"""AI Platform's rules for a command line: its job ids, no environment, what gcloud flags can say.

AI Platform has no option of its own that another platform would refuse.
"""

from __future__ import annotations

import re

from vtrain.cluster.roles import EVALUATOR
from vtrain.errors import UsageError
from vtrain.submit.problems import Problems, Rules
from vtrain.submit.request import JobRequest
from vtrain.tune.study import Study

DEFAULT_MACHINE = "n1-standard-4"
# AI Platform job ids: letters, digits and underscores, starting with a letter.
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")
NAME_SAYS = "letters, digits and '_'"


def check(request: JobRequest, study: Study | None, problems: Problems) -> None:
    """Refuse what trainingInput, or gcloud's flags with --flags-only, cannot say."""
    if request.name is not None:
        problems.job_name(request.name, NAME, NAME_SAYS)
    problems.cloud_storage(request.output_dir)
    problems.refuse("--env", list(request.env), "AI Platform's trainingInput has no environment")
    if request.flags_only:
        _flags_only(request, problems)
    if study is not None and study.measurement_selection == "BEST_MEASUREMENT":
        # Refused, not warned: HyperparameterSpec has no such field and AI Platform ranks
        # trials by finalMetric, so the job would tune a different objective than the file's.
        problems.add(
            UsageError(
                "AI Platform ranks each trial by its final measurement; its "
                "HyperparameterSpec has no measurement selection",
                source=request.study,
                path="measurement_selection_type",
                value=study.measurement_selection,
                expected="LAST_MEASUREMENT (or no measurement_selection_type) for aiplatform",
                hint="Vertex honours BEST_MEASUREMENT: vtrain submit vertex --study",
            )  # fmt: skip
        )


def elsewhere(request: JobRequest, problems: Problems) -> None:
    """Nothing: --use-chief and --flags-only mean nothing elsewhere, and are left alone there."""


def _flags_only(request: JobRequest, problems: Problems) -> None:
    """`--flags-only`: the job as gcloud flags, no config.yaml; refuse what needs the file."""
    why = "gcloud ai-platform jobs submit training has no flag for this; it needs --config"
    for flag, value in (
        ("--evaluators", request.evaluators),
        ("--evaluator-image", request.role_images.get(EVALUATOR)),
        ("--evaluator-machine-type", request.role_machine_types.get(EVALUATOR)),
        ("--evaluator-accelerator", request.role_accelerators.get(EVALUATOR)),
        ("--study", request.study), ("--timeout", request.timeout), ("--network", request.network),
    ):  # fmt: skip
        if value:
            problems.bad(flag, why, value, "no --flags-only, so that vtrain writes config.yaml")
    if request.command:
        problems.bad(
            "COMMAND", "gcloud flags pass arguments to the image's ENTRYPOINT only",
            request.command[0], "-- --flag ... (arguments only), or no --flags-only",
        )  # fmt: skip


RULES = Rules(check=check, elsewhere=elsewhere, default_machine=DEFAULT_MACHINE, name_separator="_")
