"""What every engine's rehearsal shares: the result, each replica's command, a trial's flags.

A rehearsal is the `Plan.from_options` arguments that reproduce a job on this
machine; each engine reads its own document into one (`<engine>/rehearse.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vtrain.cluster.fields import natural
from vtrain.errors import UsageError
from vtrain.submit.program import interpreter_alone, is_python, program_length
from vtrain.tune.study import Study, Value


class Rehearsal:
    """What `vtrain local run --job` runs: the plan's options, and notes for the user."""

    def __init__(self, options: dict[str, Any], notes: list[str]) -> None:
        self.options = options
        self.notes = notes


# What a rehearsal of a job on Spot VMs says: how a reclaim comes, and how to rehearse one.
SPOT_NOTE = (
    "a job on Spot VMs: a reclaim sends SIGTERM, then SIGKILL about 30 s later, and the "
    "replica restarts; rehearse one with --kill ROLE:INDEX@SECONDS:TERM (e.g. chief:0@60:TERM)"
)


def replica_command(
    role: str, command: Sequence[str], args: Sequence[str], local: Sequence[str], source: str
) -> list[str]:
    """What a replica of `role` runs here: the local command in place of the document's
    program (`python -m trainer.task`, the image's ENTRYPOINT), or the pool's own; then the
    program's arguments, as the document gives them."""
    if local:
        if interpreter_alone(local) and command and is_python(command[0]):
            # `-- .venv/bin/python`: this machine's interpreter runs the document's script.
            return [*local, *command[1:], *args]
        # However the document split `python -m trainer.task --epochs 3` between command
        # and args, `-- python -m trainer.task` stands in for the program, not the interpreter.
        words = [*command, *args]
        return [*local, *words[program_length(command, args) :]]
    if not command:
        raise UsageError(
            f"the {role} pool runs its image's ENTRYPOINT, which is not on this machine",
            source="COMMAND",
            value=source,
            expected="the local command after --, e.g. -- python train.py",
        )
    return [*command, *args]


def trial_values(study: Study, trial: str) -> dict[str, Value]:
    """The parameters the tuning service gives `trial`: a grid point, or a seeded draw."""
    from vtrain.tune.samplers import GridSampler, RandomSampler

    number = int(trial)
    # A rehearsal must not need optuna: the model-based search's first draws are random too.
    sampler = GridSampler(study) if study.algorithm == "GRID_SEARCH" else RandomSampler(study, 0)
    values = sampler.suggest(number)
    if values is None:
        raise UsageError(
            "beyond the study's grid",
            source="--trial",
            value=trial,
            expected=f"1 to {GridSampler(study).size}",
        )
    return values


def trial_flags(study: Study, trial: str) -> list[str]:
    """The flags the tuning service appends for `trial`, its active parameters only."""
    return study.flags(trial_values(study, trial))


def trial_number(trial: str | None) -> str:
    """The trial a rehearsal runs: --trial, or 1; refused when it is not a trial number."""
    trial = trial or "1"
    number = natural(trial)
    if number is None or number < 1:
        raise UsageError("not a trial number", source="--trial", value=trial, expected="1, 2, ...")
    return trial


def trial(study: Study | None, trial: str | None) -> tuple[str | None, list[str], dict[str, str]]:
    """(trial id, its flags, its variables) of a tuning job's trial; nothing for other jobs."""
    if study is None:
        if trial is not None:
            raise UsageError(
                "the job is not a tuning job",
                source="--trial",
                value=trial,
                expected="no --trial, or a HyperparameterTuningJob / "
                "config.yaml with hyperparameters",
            )
        return None, [], {}
    trial = trial_number(trial)
    return trial, trial_flags(study, trial), {"CLOUD_ML_HP_METRIC_TAG": study.metric.metric_id}
