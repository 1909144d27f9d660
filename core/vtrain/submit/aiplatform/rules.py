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
    # The names only: a value may be a credential, and a refusal is printed.
    problems.refuse(
        "--env",
        [item.partition("=")[0] for item in request.env],
        "AI Platform's trainingInput has no environment",
    )
    problems.refuse(
        "--spot",
        request.spot,
        "AI Platform Training has no Spot VMs",
        "no --spot with aiplatform; Vertex runs Spot VMs (vtrain submit vertex --spot)",
    )
    problems.ps_need_workers(request)
    if request.flags_only:
        _flags_only(request, problems)
    if study is not None:
        _conditions(request, study, problems)
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
            )
        )


def _conditions(request: JobRequest, study: Study, problems: Problems) -> None:
    """Refuse conditional parameters: ml v1's ParameterSpec has no parent values."""
    for parent in study.parameters:
        if parent.conditions:
            problems.add(
                UsageError(
                    "AI Platform's HyperparameterSpec has no conditional parameters",
                    source=request.study,
                    path=f"parameters.{parent.parameter_id}.conditional_parameter_specs",
                    value=[c.parameter.parameter_id for c in parent.conditions],
                    expected="parameters without conditional_parameter_specs for aiplatform",
                    hint="Vertex takes them: vtrain submit vertex --study",
                )
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
        ("--study", request.study),
        ("--timeout", request.timeout),
        ("--network", request.network),
    ):
        if value:
            problems.bad(flag, why, value, "no --flags-only, so that vtrain writes config.yaml")
    if request.command:
        problems.bad(
            "COMMAND",
            "gcloud flags pass arguments to the image's ENTRYPOINT only",
            request.command[0],
            "-- --flag ... (arguments only), or no --flags-only",
        )


RULES = Rules(check=check, elsewhere=elsewhere, default_machine=DEFAULT_MACHINE, name_separator="_")
