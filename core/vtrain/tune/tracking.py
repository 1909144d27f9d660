"""A study's runs in MLflow: one parent run for the study, one child run per trial.

Where the trials track to MLflow (VTRAIN_TRACK, or MLFLOW_TRACKING_URI set),
`vtrain tune` opens the study's run, and each trial's run as its child before the
trial starts, with the trial's parameters as the run's params. Each trial's
trainers get the child's name (VTRAIN_TRACK_RUN), so its leader writes into that
run; a trial's final metric goes to its run, and to the study's at the trial's
number. The study's run name is kept in the study's folder (`tracking-run`), so a
rerun or `--resume` reuses every run, and `--new-study` (which moves the folder
aside) starts new ones. A server that cannot be reached costs the study one line,
never a trial.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from vtrain.log import logger
from vtrain.track.backends import MLFLOW, backends
from vtrain.track.identity import RUN_VARIABLE, run_name
from vtrain.tune.results import Trial

RUN_FILE = "tracking-run"
"""In the study's folder: the name of the study's run."""

log = logger(__name__)


def study_run(output_dir: str) -> str:
    """The study's run name, made and kept in `output_dir` on first use."""
    path = os.path.join(output_dir, RUN_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            kept = f.read().strip()
        if kept:
            return kept
    except FileNotFoundError:
        pass
    base = os.path.basename(os.path.abspath(output_dir))
    name = run_name(f"study-{base}-{time.strftime('%Y%m%d-%H%M%S')}", None, "study")
    with open(path, "w", encoding="utf-8") as f:
        f.write(name + "\n")
    return name


class StudyRuns:
    """The study's parent run and its trials' child runs, through MLflow's client."""

    def __init__(self, name: str, metric: str, environ: Mapping[str, str]) -> None:
        self.name = name
        self._metric = metric
        self._environ = dict(environ)
        self._mlflow: Any = None
        self._experiment = ""
        self._parent: str | None = None
        self._broken = False

    @classmethod
    def made(
        cls, output_dir: str, metric: str, settings: Mapping[str, Any], environ: Mapping[str, str]
    ) -> StudyRuns | None:
        """The study's runs where its trials track to MLflow, else None; the study's run is
        opened now, with the study's `settings` as its params."""
        if MLFLOW not in backends(environ):
            return None
        runs = cls(study_run(output_dir), metric, environ)
        runs._try(runs._open, settings)
        return runs

    def trial_run(self, trial_id: str) -> str:
        """The name of a trial's run."""
        return f"{self.name}-trial-{trial_id}"

    def trial_env(self, trial_id: str) -> dict[str, str]:
        """What a trial's trainers get: the name of the run they write."""
        return {RUN_VARIABLE: self.trial_run(trial_id)}

    def started(self, trial: Trial) -> None:
        """Open the trial's run (a child of the study's) with its parameters."""
        self._try(self._started, trial)

    def finished(self, trial: Trial) -> None:
        """The trial's final metric, in its run and in the study's at the trial's number."""
        self._try(self._finished, trial)

    # -- through MLflow ------------------------------------------------------------------

    def _try(self, action: Any, *args: Any) -> None:
        if self._broken:
            return
        try:
            action(*args)
        except Exception as e:  # the server's, the client's: the study goes on untracked
            from vtrain.redact import redact_text

            self._broken = True
            log.warning(
                f"vtrain tune: not tracking study {self.name} in MLflow: "
                f"{redact_text(f'{type(e).__name__}: {e}')}"
            )

    def _open(self, settings: Mapping[str, Any]) -> None:
        from vtrain.track.mlflow_runs import address, client, experiment_id, open_run

        self._mlflow = client(self._environ)
        self._experiment = experiment_id(self._mlflow, self._environ)
        parent = open_run(self._mlflow, self._experiment, self.name, tags={"vtrain.study": "1"})
        self._parent = parent.info.run_id
        self._params(parent, {k: str(v) for k, v in settings.items()})
        log.info(
            f"vtrain tune: MLflow run of the study: "
            f"{address(self._mlflow, self._experiment, self._parent)}"
        )

    def _params(self, run: Any, values: Mapping[str, str]) -> None:
        from mlflow.entities import Param

        # A rerun logs the same values again: only those the run lacks (MLflow changes none).
        new = {k: v for k, v in values.items() if k not in run.data.params}
        if new:
            self._mlflow.log_batch(run.info.run_id, params=[Param(k, v) for k, v in new.items()])

    def _started(self, trial: Trial) -> None:
        from vtrain.track.mlflow_runs import open_run

        run = open_run(
            self._mlflow, self._experiment, self.trial_run(trial.trial_id), parent=self._parent
        )
        self._params(run, {k: str(v) for k, v in trial.parameters.items()})

    def _finished(self, trial: Trial) -> None:
        from vtrain.track.mlflow_runs import find_run

        self._mlflow.set_tag(self._parent, f"vtrain.trial-{trial.trial_id}.status", trial.status)
        run = find_run(self._mlflow, self._experiment, self.trial_run(trial.trial_id))
        if run is None:
            return
        self._mlflow.set_tag(run.info.run_id, "vtrain.trial.status", trial.status)
        if trial.final_metric is None:
            return
        now = int(time.time() * 1000)
        if self._metric not in run.data.metrics:  # a script that tracks reported it already
            self._mlflow.log_metric(run.info.run_id, self._metric, trial.final_metric, now, 0)
        self._mlflow.log_metric(self._parent, self._metric, trial.final_metric, now, trial.number)
