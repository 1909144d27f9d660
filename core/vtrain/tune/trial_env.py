"""One trial's folder and environment: what Vertex gives a trial, under ``<output>/<trial>/``.

A single-process trial is a one-replica `vtrain local run --trial N` job that
`vtrain tune` starts itself: its variables come from the same writer, so a
script sees the same job, region and project ids, folders and metric file
either way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from vtrain.context import output_dirs, trial_folder
from vtrain.local.environment import metric_file, replica_env
from vtrain.local.plan import Plan
from vtrain.local.ports import reserve_ports

LOG_FILE = "trial.log"


def trial_plan(
    command: Sequence[str],
    output_dir: str,
    trial_id: str,
    *,
    workers: int = 0,
    ps: int = 0,
    evaluators: int = 0,
) -> Plan:
    """The job `vtrain local run --trial TRIAL --output-dir OUTPUT` runs for one trial."""
    return Plan.from_options(
        command,
        output_dir=output_dir,
        trial_id=trial_id,
        workers=workers,
        ps=ps,
        evaluators=evaluators,
    )


def make_trial_folders(plan: Plan) -> None:
    """Make the trial's folder and those its variables name (AIP_MODEL_DIR, the checkpoints,
    the logs, the metric file's), as `vtrain local run` does for a job: a trial that writes
    its model with a plain open() must work the same under `vtrain tune`."""
    folders = output_dirs(plan.output_dir, plan.trial_id).values()
    for folder in (*folders, os.path.dirname(trial_metric_file(plan))):
        os.makedirs(folder, exist_ok=True)


def trial_log(output_dir: str, trial_id: str) -> str:
    """``<output>/<trial>/trial.log``: what the trial's processes printed."""
    return os.path.join(trial_folder(output_dir, trial_id), LOG_FILE)


def trial_metric_file(plan: Plan) -> str:
    """The metric file the study reads: the chief's, in a trial of any size."""
    chief = plan.replicas()[0]
    return metric_file(plan, chief)


def trial_environment(plan: Plan, environ: Mapping[str, str], metric_tag: str) -> dict[str, str]:
    """The environment of a single-process trial: its replica's, with the study's metric tag."""
    # Nothing connects to a single replica's own address; it only has to be a real one.
    with reserve_ports(1) as ports:
        (me,) = plan.replicas(ports)
    # The tag reaches the trial as it reaches a distributed trial's replicas: inherited.
    parent = {**environ, "CLOUD_ML_HP_METRIC_TAG": metric_tag}
    return replica_env(plan, (me,), me, environ=parent)
