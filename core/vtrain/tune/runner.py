"""Running a study: one process (or one local cluster) per trial, in parallel, resumable.

Each trial gets what Vertex gives it: the parameters as ``--name=value`` flags
after the command, and the variables `vtrain local run --trial N` writes
(CLUSTER_SPEC, the CLOUD_ML_* ids, a metric file of its own, and
`AIP_MODEL_DIR`/`AIP_CHECKPOINT_DIR`/`AIP_TENSORBOARD_LOG_DIR` under
``<output>/<trial>/``). The state of the study is ``<output>/study.json``,
rewritten atomically after every change; run the same study into the same
folder again and finished trials are kept, interrupted ones rerun.
"""

from __future__ import annotations

import math
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

from vtrain.errors import LaunchError, StorageError, UsageError
from vtrain.hypertune.metric_file import RESERVED_KEYS, metric_values, read_entries
from vtrain.local.process import kill_group
from vtrain.local.reaper import spawn
from vtrain.tune.results import (
    ACTIVE,
    FAILED,
    INFEASIBLE,
    RESULTS_FILE,
    STOPPED,
    SUCCEEDED,
    StudyResult,
    Trial,
    read_trials,
    write_results,
)
from vtrain.tune.samplers import grid_size, make_sampler
from vtrain.tune.study import Study
from vtrain.tune.tracking import StudyRuns
from vtrain.tune.trial_env import (
    make_trial_folders,
    trial_environment,
    trial_log,
    trial_metric_file,
    trial_plan,
)

# How long a stopped trial gets between SIGTERM and SIGKILL.
STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class Replicas:
    """Run each trial as a local cluster of a chief plus these (all 0: one process)."""

    workers: int = 0
    ps: int = 0
    evaluators: int = 0

    @property
    def distributed(self) -> bool:
        """True when a trial needs `vtrain local run`."""
        return self.workers + self.ps + self.evaluators > 0


@dataclass
class _Running:
    trial: Trial
    process: subprocess.Popen[bytes]
    metric_file: str
    started: float = field(default_factory=time.monotonic)


class StudyRunner:
    """Runs one study into one output folder; `run()` returns when it is over."""

    def __init__(
        self,
        study: Study,
        command: Sequence[str],
        output_dir: str,
        *,
        replicas: Replicas = Replicas(),
        parallel: int | None = None,
        seed: int = 0,
        environ: Mapping[str, str] | None = None,
        progress: Callable[[str, Trial, StudyRunner], None] | None = None,
        runs: StudyRuns | None = None,
    ) -> None:
        if not command:
            raise UsageError(
                "no command to run", source="COMMAND", expected="vtrain tune ... -- python train.py"
            )
        if shutil.which(command[0]) is None:
            raise UsageError(
                "command not found",
                source="COMMAND",
                value=command[0],
                expected="a program on PATH or a path to an executable",
            )
        self.study = study
        self.command = list(command)
        self.output_dir = os.path.abspath(output_dir)
        self.results_file = os.path.join(self.output_dir, RESULTS_FILE)
        self.replicas = replicas
        self.parallel = parallel or study.parallel_trial_count
        self.seed = seed
        self.environ = os.environ if environ is None else environ
        self.runs = runs
        """The study's MLflow runs, where its trials track there (`vtrain.tune.tracking`)."""
        self.progress = progress
        self.trials: dict[str, Trial] = {}
        self._running: dict[str, _Running] = {}
        self._done: queue.Queue[str] = queue.Queue()
        self.status = ACTIVE
        self.reason = ""

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> StudyResult:
        """Run (or resume) the study; KeyboardInterrupt stops running trials, then propagates."""
        os.makedirs(self.output_dir, exist_ok=True)
        self.trials = read_trials(self.results_file, self.study)
        self._done = queue.Queue()
        sampler = make_sampler(self.study, self.seed)
        for t in sorted(self.trials.values(), key=lambda t: t.number):
            if t.status in (SUCCEEDED, FAILED):
                sampler.observe(t.number, t.parameters, t.final_metric)
        rerun = [t for t in self.trials.values() if t.status in (ACTIVE, STOPPED)]
        number = max((t.number for t in self.trials.values()), default=0) + 1
        running = self._running = {}
        self.status, self.reason = ACTIVE, ""
        try:
            while True:
                while self.status == ACTIVE and len(running) < self.parallel:
                    self._check_failures()
                    if self.status != ACTIVE:
                        break
                    if rerun:
                        trial = replace(rerun.pop(0), status=ACTIVE, reason="")
                    elif number <= self.study.max_trial_count:
                        parameters = sampler.suggest(number)
                        if parameters is None:
                            break
                        trial = Trial(str(number), parameters, ACTIVE)
                        number += 1
                    else:
                        break
                    self._start(trial)  # which adds it to `running`
                if not running:
                    break
                finished = self._finish(running.pop(self._done.get()))
                sampler.observe(finished.number, finished.parameters, finished.final_metric)
                self._check_failures()
                if self.status != ACTIVE:
                    self._stop(running, self.reason)
        except BaseException as e:
            why = "interrupted" if isinstance(e, KeyboardInterrupt) else f"stopped by an error: {e}"
            self.status, self.reason = STOPPED, why
            self._stop(running, why)
            raise
        finally:
            if self.status == ACTIVE:
                self._settle()
            self._save()
        return StudyResult(
            self.status, self._ordered(), self.best(), self.results_file, self.reason
        )

    @property
    def total(self) -> int:
        """How many trials the study runs at most: max_trial_count, or a smaller grid."""
        return min(self.study.max_trial_count, grid_size(self.study) or self.study.max_trial_count)

    def _check_failures(self) -> None:
        limit = self.study.max_failed_trial_count
        failed = sum(t.status == FAILED for t in self.trials.values())
        if limit and failed >= limit and self.status == ACTIVE:
            self.status = FAILED
            self.reason = f"{failed} trials failed (max_failed_trial_count is {limit})"

    def _settle(self) -> None:
        if not any(t.status == SUCCEEDED for t in self.trials.values()):
            self.status, self.reason = FAILED, "no trial succeeded"
        else:
            self.status = SUCCEEDED

    # -- one trial -----------------------------------------------------------------------

    def _start(self, trial: Trial) -> _Running:
        flags = self.study.flags(trial.parameters)
        argv = [*self.command, *flags]
        plan = trial_plan(argv, self.output_dir, trial.trial_id, **asdict(self.replicas))
        make_trial_folders(plan)
        tag = self.study.metric.metric_id
        if not self.replicas.distributed:
            env = trial_environment(plan, self.environ, tag)
        else:
            # `vtrain local run` writes each replica's variables; the tag reaches them all.
            env = {**self.environ, "CLOUD_ML_HP_METRIC_TAG": tag}
            r = self.replicas
            argv = [
                sys.executable,
                "-m",
                "vtrain",
                "local",
                "run",
                "--workers",
                str(r.workers),
                "--ps",
                str(r.ps),
                "--evaluators",
                str(r.evaluators),
                "--trial",
                trial.trial_id,
                "--output-dir",
                self.output_dir,
                "--",
                *argv,
            ]
        if self.runs is not None:  # the trial's run, opened before its trainers write to it
            env = {**env, **self.runs.trial_env(trial.trial_id)}
            self.runs.started(trial)
        trial = replace(
            trial, started_at=time.time(), exit_code=None, final_metric=None, duration_s=None
        )
        try:
            with open(trial_log(self.output_dir, trial.trial_id), "ab") as log:
                # A session of its own: Ctrl-C reaches `vtrain tune` only, which then stops
                # each trial's whole process group, local-cluster replicas included. The
                # guard stops what the trial leaves, and all of it if `vtrain tune` dies.
                process = spawn(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                )
        except OSError as e:
            raise LaunchError(
                f"cannot start trial {trial.trial_id}: {e.strerror or e}",
                source="COMMAND",
                value=argv[0],
            ) from e
        running = _Running(trial, process, trial_metric_file(plan))
        # At once, before the record (a file written): a Ctrl-C or SIGTERM from here on stops
        # this trial with the others, and records it stopped.
        self._running[trial.trial_id] = running
        done, trial_id = self._done, trial.trial_id

        def wait() -> None:
            # One waiting thread per trial: the loop wakes the moment any trial ends.
            process.wait()
            done.put(trial_id)

        threading.Thread(target=wait, daemon=True).start()
        self._record(trial, "started")
        return running

    def _finish(self, running: _Running, *, stopped: str = "") -> Trial:
        code = running.process.wait()
        trial = replace(
            running.trial, exit_code=code, duration_s=time.monotonic() - running.started
        )
        tag = self.study.metric.metric_id
        entries: list[dict[str, str | float]] = []
        try:
            entries = read_entries(running.metric_file)
        except StorageError as e:
            trial = replace(trial, reason=str(e))
        values = metric_values(entries, tag)
        # A NaN or infinite report makes the trial infeasible: it has no final metric to rank.
        not_finite = [v for v in values if not math.isfinite(v)]
        if values and not not_finite:
            pick = max if self.study.metric.goal == "MAXIMIZE" else min
            final = (
                values[-1]
                if self.study.measurement_selection == "LAST_MEASUREMENT"
                else pick(values)
            )
            trial = replace(trial, final_metric=final)
        if stopped:
            trial = replace(trial, status=STOPPED, reason=stopped)
        elif code != 0:
            trial = replace(trial, status=FAILED, reason=_exit_reason(code))
        elif not_finite:
            reason = f"reported {tag}={not_finite[0]!r}, which is not a finite number"
            trial = replace(trial, status=INFEASIBLE, reason=reason)
        elif not values:
            trial = replace(trial, status=FAILED, reason=trial.reason or _nothing(tag, entries))
        else:
            trial = replace(trial, status=SUCCEEDED)
        self._record(trial, "finished")
        if self.runs is not None:
            self.runs.finished(trial)
        return trial

    def kill_now(self) -> None:
        """SIGKILL every running trial (a second Ctrl-C); `run` still records them as stopped.

        Safe in a signal handler: it only sends signals.
        """
        for r in list(self._running.values()):
            kill_group(r.process.pid, signal.SIGKILL)

    def _stop(self, running: dict[str, _Running], reason: str) -> None:
        for r in running.values():
            kill_group(r.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for r in running.values():
            try:
                r.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                kill_group(r.process.pid, signal.SIGKILL)
        for r in list(running.values()):
            self._finish(r, stopped=reason)
        running.clear()

    # -- state -----------------------------------------------------------------------------

    def _record(self, trial: Trial, event: str) -> None:
        self.trials[trial.trial_id] = trial
        self._save()
        if self.progress is not None:
            self.progress(event, trial, self)

    def _ordered(self) -> tuple[Trial, ...]:
        return tuple(sorted(self.trials.values(), key=lambda t: t.number))

    def best(self) -> Trial | None:
        """The succeeded trial with the best final metric so far."""
        best, best_value = None, 0.0
        for t in self._ordered():
            if t.status != SUCCEEDED or t.final_metric is None:
                continue
            if best is None or self.study.metric.better(t.final_metric, best_value):
                best, best_value = t, t.final_metric
        return best

    def _save(self) -> None:
        write_results(
            self.results_file,
            study=self.study,
            command=self.command,
            seed=self.seed,
            replicas=asdict(self.replicas),
            output_dir=self.output_dir,
            status=self.status,
            reason=self.reason,
            trials=self._ordered(),
            best=self.best(),
        )


def _exit_reason(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _nothing(tag: str, entries: list[dict[str, str | float]]) -> str:
    """Why a trial has no metric: what it did report instead, so that a typo shows."""
    reported = sorted({key for entry in entries for key in entry} - RESERVED_KEYS)
    if not reported:
        return f"reported no {tag!r} metric (nothing was reported)"
    return f"reported no {tag!r} metric; it reported " + ", ".join(map(repr, reported))
