"""`vtrain tune --study STUDY.yaml -- COMMAND...`: run a hyperparameter-tuning study locally."""

from __future__ import annotations

import argparse
import os
import signal
from collections.abc import Mapping
from types import FrameType
from typing import TYPE_CHECKING, Any

from vtrain.cli.arguments import integer, track_option
from vtrain.cli.output import say
from vtrain.errors import UsageError
from vtrain.log import logger

if TYPE_CHECKING:
    from vtrain.local.mlflow_server import TrackingServer
    from vtrain.tune.rerun import Settled
    from vtrain.tune.results import Recorded, StudyResult, Trial
    from vtrain.tune.runner import StudyRunner
    from vtrain.tune.study import Study
    from vtrain.tune.study_lock import StudyLock
    from vtrain.tune.tracking import StudyRuns


_STUDY_FILE = """\
a study file (Vertex's StudySpec and trial counts; YAML, or the same fields in JSON):
  metrics:
    - metric_id: loss          # the tag the script reports: vtrain.hypertune.report(v, tag="loss")
      goal: MINIMIZE           # or MAXIMIZE
  parameters:                  # each reaches COMMAND as --parameter_id=value
    - parameter_id: learning_rate
      double_value_spec: {min_value: 0.001, max_value: 0.3}
      scale_type: UNIT_LOG_SCALE
    - parameter_id: batch_size
      discrete_value_spec: {values: [16, 32, 64]}   # also integer_ and categorical_value_spec
    - parameter_id: optimizer
      categorical_value_spec: {values: [adam, sgd]}
      conditional_parameter_specs:                  # searched only for some parent values
        - parent_categorical_values: {values: [sgd]}
          parameter_spec:
            parameter_id: momentum
            double_value_spec: {min_value: 0.0, max_value: 0.99}
  algorithm: RANDOM_SEARCH     # GRID_SEARCH; ALGORITHM_UNSPECIFIED is model-based (optuna)
  max_trial_count: 8
  parallel_trial_count: 2

metric_id must be the tag the script reports under; a report without a tag uses
CLOUD_ML_HP_METRIC_TAG, which vtrain tune sets to metric_id. YAML and
ALGORITHM_UNSPECIFIED need the tune extra (pip install "vtrain[tune]"); JSON and
the other algorithms need nothing. examples/pytorch/study.yaml is a complete one:
  vtrain tune --study examples/pytorch/study.yaml -- python examples/pytorch/train.py
"""


def add_parser(subparsers: Any) -> None:
    """Register `vtrain tune`."""
    p = subparsers.add_parser(
        "tune",
        help="run a hyperparameter-tuning study locally",
        description="Run each trial of a study as the platform would: COMMAND gets the parameters "
        "as --name=value flags, its own trial id, metric file and output folder. The same "
        "command again resumes the study (finished trials are kept); another command, search "
        "space or cluster shape needs --resume or --new-study.",
        epilog=_STUDY_FILE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--study",
        required=True,
        metavar="STUDY.yaml",
        help="the study file (YAML needs the tune extra; JSON works without it)",
    )
    p.add_argument(
        "--output-dir",
        metavar="DIR",
        help="where trials and study.json go (default: vtrain-output/tune/ and the study "
        "file's path, with study.yaml as study-yaml: one folder per study file); study.json "
        "records the command, its credentials too, so it is readable by this user only (0600)",
    )
    p.add_argument(
        "--parallel",
        type=_positive,
        metavar="N",
        help="trials at once (default: the study's parallel_trial_count)",
    )
    p.add_argument(
        "--seed", type=integer, default=0, help="seed of the random and model-based searches"
    )
    p.add_argument(
        "--workers",
        type=_count,
        default=0,
        metavar="N",
        help="run each trial as a local cluster with N workers besides the chief",
    )
    p.add_argument("--ps", type=_count, default=0, metavar="M", help="... and M parameter servers")
    p.add_argument("--evaluators", type=_count, default=0, metavar="K", help="... and K evaluators")
    rerun = p.add_mutually_exclusive_group()
    rerun.add_argument(
        "--resume",
        action="store_true",
        help="go on with the study in the output folder as it was run: its own command, search "
        "space, cluster shape and seed (COMMAND may then be left out)",
    )
    rerun.add_argument(
        "--new-study",
        action="store_true",
        help="start a new study in the output folder; the one there moves to <folder>.N",
    )
    p.add_argument(
        "--track",
        type=track_option,
        metavar="BACKENDS",
        help="where the trials' handle.track writes (VTRAIN_TRACK): with mlflow, the study "
        "is a parent run and each trial a child run with its parameters and metric, on a "
        "tracking server of the study's own (its store in the output folder) unless "
        "MLFLOW_TRACKING_URI names one; needs the local-mlflow extra",
    )
    # Not `command`: the top-level parser keeps the sub-command's name there.
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]")
    p.set_defaults(run=run)


def _count(text: str) -> int:
    value = integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def _positive(text: str) -> int:
    value = integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


class _Interrupted(KeyboardInterrupt):
    """The first SIGINT or SIGTERM: the study stops its trials, records them, and exits."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def run(args: argparse.Namespace) -> int:
    """Run the study; 0 when it succeeded, 1 when it failed."""
    from vtrain.tune.study_file import read_study
    from vtrain.tune.study_lock import StudyLock

    log = logger("vtrain.tune")

    command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not command and not args.resume:
        raise UsageError(
            "no command to run",
            source="vtrain tune",
            expected="vtrain tune --study S.yaml -- COMMAND",
        )
    study = read_study(args.study)
    for field in study.ignored:
        log.info(f"vtrain tune: note: {args.study}: {field} is ignored by the local runner")
    output_dir = args.output_dir or default_output_dir(args.study, os.environ)
    # One study per folder, from the reading of its study.json to the study's end.
    with StudyLock(output_dir, args.study) as lock:
        return _run_study(args, command, study, output_dir, lock)


def _run_study(
    args: argparse.Namespace,
    command: list[str],
    study: Study,
    output_dir: str,
    lock: StudyLock,
) -> int:
    """Settle what to run in the folder `lock` holds, and run the study."""
    from vtrain.redact import redact_text
    from vtrain.tune.rerun import settle
    from vtrain.tune.runner import Replicas, StudyRunner
    from vtrain.tune.table import progress_line

    log = logger("vtrain.tune")
    settled = settle(
        output_dir,
        study,
        command,
        Replicas(args.workers, args.ps, args.evaluators),
        args.seed,
        resume=args.resume,
        new_study=args.new_study,
    )
    for note in settled.notes:
        log.info(redact_text(note))
    study = settled.study
    runner = StudyRunner(
        study,
        settled.command,
        output_dir,
        replicas=settled.replicas,
        parallel=args.parallel,
        seed=settled.seed,
        progress=lambda event, trial, r: log.info(
            redact_text(progress_line(event, _shown_trial(trial), r))
        ),
    )
    if settled.set_aside:
        kept = lock.set_aside()
        log.info(f"vtrain tune: a new study; the earlier one is kept in {kept}")
    server = None
    if args.track:  # in the study's folder, once the earlier study's is set aside
        from vtrain.local.mlflow_server import tracking

        runner.environ, server = tracking(args.track, runner.output_dir, runner.environ)
    try:
        runner.runs = _study_runs(runner, settled)
        return _run_trials(args, runner, settled, server)
    finally:
        if server is not None:
            server.stop()


def _study_runs(runner: StudyRunner, settled: Settled) -> StudyRuns | None:
    """The study's MLflow runs, where its trials track to MLflow."""
    from vtrain.tune.tracking import StudyRuns

    study = runner.study
    settings = {
        "algorithm": study.algorithm,
        "metric": study.metric.metric_id,
        "goal": study.metric.goal,
        "max_trial_count": study.max_trial_count,
        "parallel_trial_count": study.parallel_trial_count,
        "seed": settled.seed,
    }
    return StudyRuns.made(runner.output_dir, study.metric.metric_id, settings, runner.environ)


def _run_trials(
    args: argparse.Namespace, runner: StudyRunner, settled: Settled, server: TrackingServer | None
) -> int:
    """Run the study's trials, until they end or a signal stops them."""
    from vtrain.local.reaper import reaping
    from vtrain.redact import redact_text
    from vtrain.tune.results import SUCCEEDED
    from vtrain.tune.table import summary

    log = logger("vtrain.tune")
    study = runner.study
    log.info(
        f"vtrain tune: {study.algorithm}, up to {study.max_trial_count} trials, "
        f"{runner.parallel} at once, into {runner.output_dir}"
    )
    if settled.recorded is not None:
        log.info(_resuming(runner, settled.recorded))
    received: list[int] = []

    def interrupt(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        if len(received) == 1:
            raise _Interrupted(signum)
        # Again while the trials stop: kill them now, but let the study record them as
        # stopped; raising here would leave them running and study.json saying ACTIVE.
        runner.kill_now()

    # SIGTERM (a container stop, a CI timeout) stops the trials as Ctrl-C does. SIGINT is
    # set too: a shell without job control starts background commands with it ignored,
    # and Python then never raises KeyboardInterrupt, so the study would not stop.
    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        with reaping():  # what a trial orphans comes back to us, and goes with the study
            result = runner.run()
    except _Interrupted as e:
        log.warning(_interrupted(runner, e.signum, args.new_study))
        return 128 + e.signum  # as a shell reports it: 130 for Ctrl-C, 143 for SIGTERM
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    say(redact_text(summary(study, _shown(result))))
    if result.best is not None:
        say(redact_text(_outputs(runner, result.best.trial_id)))
    if server is not None:
        say(f"MLflow runs: {server.folder}; browse them: {server.browse}")
    return 0 if result.status == SUCCEEDED else 1


def _interrupted(runner: StudyRunner, signum: int, new_study: bool) -> str:
    """The line after a Ctrl-C or SIGTERM: what stopped, and how to go on with the study."""
    from vtrain.tune.results import STOPPED

    name = signal.Signals(signum).name
    stopped = [t.trial_id for t in runner.trials.values() if t.status == STOPPED]
    again = "the same command without --new-study" if new_study else "the same command"
    return (
        f"vtrain tune: stopped by {'Ctrl-C (SIGINT)' if name == 'SIGINT' else name}"
        + (f"; trial{'s' * (len(stopped) > 1)} {', '.join(stopped)} stopped" if stopped else "")
        + f". Run {again} again to resume the study in {runner.output_dir}: finished trials "
        "are kept, stopped ones run again."
    )


def _resuming(runner: StudyRunner, recorded: Recorded) -> str:
    """One line on a rerun: how far the study on record had got, and how to start afresh."""
    from vtrain.tune.results import FAILED, INFEASIBLE, SUCCEEDED

    done = sum(t.status in (SUCCEEDED, FAILED, INFEASIBLE) for t in recorded.trials.values())
    where = runner.output_dir
    if done >= runner.total:
        return (
            f"vtrain tune: the study in {where} has run all {runner.total} trials; its results "
            "follow (--new-study runs it again, a larger max_trial_count adds trials)"
        )
    return (
        f"vtrain tune: resuming the study in {where}: {done} of {runner.total} trials finished "
        "(--new-study starts afresh)"
    )


def default_output_dir(study_file: str, environ: Mapping[str, str]) -> str:
    """``vtrain-output/tune/<the study file's path, its suffix a part of the name>``.

    One folder per study file: study.yaml and study.json, or two folders' study.yaml, are
    different studies, and a folder holds one (a second one's search space is refused).
    """
    base = environ.get("VTRAIN_OUTPUT_DIR") or "vtrain-output"
    path = os.path.abspath(study_file)
    if os.path.commonpath([os.getcwd(), path]) == os.getcwd():
        path = os.path.relpath(path)
    folder, name = os.path.split(path.lstrip(os.sep))
    stem, suffix = os.path.splitext(name)
    return os.path.join(base, "tune", folder, f"{stem}-{suffix[1:]}" if suffix else stem)


def _outputs(runner: StudyRunner, trial_id: str) -> str:
    """Where the best trial's model, checkpoints, logs and metric are; TensorBoard for all."""
    from vtrain.context import output_dirs
    from vtrain.outputs import summary
    from vtrain.tune.trial_env import trial_metric_file, trial_plan

    dirs = output_dirs(runner.output_dir, trial_id)
    r = runner.replicas
    plan = trial_plan(
        runner.command,
        runner.output_dir,
        trial_id,
        workers=r.workers,
        ps=r.ps,
        evaluators=r.evaluators,
    )
    rows = [
        ("model", dirs["AIP_MODEL_DIR"]),
        ("checkpoints", dirs["AIP_CHECKPOINT_DIR"]),
        ("TensorBoard logs", dirs["AIP_TENSORBOARD_LOG_DIR"]),
        ("tuning metric", trial_metric_file(plan)),
    ]
    # TensorBoard finds every trial's logs below the study's folder, one run each.
    return summary(rows, runner.output_dir, title=f"outputs of the best trial, {trial_id}:")


def _shown_trial(trial: Trial) -> Trial:
    """`trial` as it may be printed: a parameter named like a credential shows as ***."""
    from dataclasses import replace

    from vtrain.redact import redact, redact_text

    return replace(
        trial, parameters=redact(dict(trial.parameters)), reason=redact_text(trial.reason)
    )


def _shown(result: StudyResult) -> StudyResult:
    """`result` with each trial as `_shown_trial` prints it."""
    from dataclasses import replace

    best = None if result.best is None else _shown_trial(result.best)
    return replace(result, trials=tuple(map(_shown_trial, result.trials)), best=best)
