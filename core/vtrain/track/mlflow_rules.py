"""How a run's records appear in MLflow, across the attempts of one run (pure).

MLflow keeps every value a metric was given, and deletes none: a step that a
resumed attempt trains again would show two values at one step. So the run's
series keeps, at each step, the value first logged there; an attempt that redoes
a step an earlier attempt logged writes it as `<name>/attempt-<k>`, which says
whose it is. Parameters cannot change in MLflow either: a value an attempt
changes is kept as `<name>/attempt-<k>`.
"""

from __future__ import annotations

from collections.abc import Mapping

RUN_TAG = "vtrain.run"
"""The tag that names a run as vtrain knows it (the job's, or the trial's)."""
ATTEMPT_TAG = "vtrain.attempt"
"""The tag of the run's latest attempt; also a metric, logged at the step each attempt began."""
PARENT_TAG = "mlflow.parentRunId"
"""MLflow's own tag of a child run (a trial's, under its study's)."""


def attempt_name(name: str, attempt: int) -> str:
    """`name` as attempt `attempt` writes what an earlier attempt wrote already."""
    return f"{name}/attempt-{attempt}"


def metric_name(name: str, step: int, attempt: int, earlier: int | None) -> str:
    """The name of metric `name` at `step` from `attempt`, where `earlier` is the highest step
    earlier attempts logged it at (None: none did)."""
    if attempt > 1 and earlier is not None and step <= earlier:
        return attempt_name(name, attempt)
    return name


def param_updates(
    existing: Mapping[str, str], new: Mapping[str, str], attempt: int
) -> dict[str, str]:
    """The params to log for `new`, given the run's `existing` ones: those it lacks, and those
    whose value changed under this attempt's name (MLflow refuses to change a param)."""
    found = {}
    for name, value in new.items():
        if name not in existing:
            found[name] = value
        elif existing[name] != value:
            found[attempt_name(name, attempt)] = value
    return found


def run_filter(run: str) -> str:
    """The search that finds run `run` (a name made of letters, digits, '.', '_' and '-')."""
    return f"tags.`{RUN_TAG}` = '{run}'"
