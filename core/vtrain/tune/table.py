"""What `vtrain tune` prints: a line per trial event while it runs, a table at the end."""

from __future__ import annotations

from collections.abc import Sequence

from vtrain.tune.results import ACTIVE, FAILED, INFEASIBLE, SUCCEEDED, StudyResult, Trial
from vtrain.tune.runner import StudyRunner
from vtrain.tune.samplers import Parameters
from vtrain.tune.study import Study, Value
from vtrain.tune.trial_env import trial_log


def _value(v: Value | None) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _parameters(parameters: Parameters) -> str:
    return " ".join(f"{k}={_value(v)}" for k, v in parameters.items())


def progress_line(event: str, trial: Trial, runner: StudyRunner) -> str:
    """One line about a trial that started or finished, with the study's standing."""
    trials = runner.trials.values()
    done = sum(t.status in (SUCCEEDED, FAILED, INFEASIBLE) for t in trials)
    running = sum(t.status == ACTIVE for t in trials)
    failed = sum(t.status == FAILED for t in trials)
    head = f"[{done}/{runner.total}] trial {trial.trial_id}"
    if event == "started":
        return f"{head} started: {_parameters(trial.parameters)}"
    tag = runner.study.metric.metric_id
    what = f"{trial.status} in {trial.duration_s or 0:.1f} s"
    if trial.final_metric is not None:
        what += f", {tag}={_value(trial.final_metric)}"
    if trial.reason:
        what += f" ({trial.reason})"
    if trial.status == FAILED:
        what += f", log: {trial_log(runner.output_dir, trial.trial_id)}"
    best = runner.best()
    standing = f"{running} running, {failed} failed"
    if best is not None:
        standing += f"; best: trial {best.trial_id}, {tag}={_value(best.final_metric)}"
    return f"{head} {what} | {standing}"


def results_table(study: Study, trials: Sequence[Trial]) -> str:
    """Every trial: parameters, final metric, status and duration, aligned in columns."""
    names = [p.parameter_id for p in study.all_parameters()]
    header = ["trial", *names, study.metric.metric_id, "status", "duration"]
    rows = [
        [
            t.trial_id,
            *(_value(t.parameters.get(n)) for n in names),
            _value(t.final_metric),
            t.status,
            "-" if t.duration_s is None else f"{t.duration_s:.1f} s",
        ]
        for t in trials
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    )


def summary(study: Study, result: StudyResult) -> str:
    """The table, the best trial, how the study ended and where the results are."""
    lines = [results_table(study, result.trials), ""]
    tag = study.metric.metric_id
    if result.best is not None:
        b = result.best
        goal = study.metric.goal.lower()
        lines.append(
            f"best trial: {b.trial_id}  {tag}={_value(b.final_metric)} ({goal})"
            f"  {_parameters(b.parameters)}"
        )
    else:
        lines.append("best trial: none succeeded")
    ended = f"study {result.status}"
    if result.reason:
        ended += f": {result.reason}"
    lines += [ended, f"results: {result.results_file}"]
    return "\n".join(lines)
