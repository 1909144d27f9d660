"""`vtrain local run`: rehearse a multi-replica job on this machine."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from vtrain.cli.arguments import integer, seconds, track_option
from vtrain.cli.output import complain, say
from vtrain.local.live import DEFAULT_PROGRESS_EVERY
from vtrain.local.plan import (
    DEFAULT_GRACE_SECONDS,
    DEFAULT_MAX_RESTARTS,
    DEFAULT_QUIET_AFTER,
    PLATFORMS,
)

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging
    from collections.abc import Iterator
    from typing import Any

    from vtrain.local.plan import Plan

_EXAMPLE = """\
examples:
  vtrain local run --workers 2 -- python train.py --epochs 3
  vtrain local run --workers 1 --ps 1 --kill worker:0@5 -- python train.py
  vtrain local run --workers 1 --restart-job-on-worker-restart --kill worker:0@12:STOP \
      -- python train.py   (a machine that hangs: the chief's watchdog ends it, the job resumes)
  vtrain local run --platform torchrun --workers 3 -- python train_torch.py
  vtrain local run --job job.yaml -- python -m trainer.task   (a job from `vtrain render`:
      runs `python -m trainer.task` with the job's args, e.g. --epochs 3)

Each replica gets the environment its platform would give it (CLUSTER_SPEC,
TF_CONFIG, AIP_* directories, CLOUD_ML_* ids, or the kubeflow/torchrun
variables), an address of its own (127.0.0.2, 127.0.0.3...) with a free port,
and a disk of its own: its working folder (links to this folder's entries),
HOME and TMPDIR under OUTPUT/disks/; only the AIP_* folders, /gcs/ and gs://
are shared (--shared-disk: one disk for all). The job succeeds when the chief
exits 0; the other replicas are then stopped. A replica that fails, or that
--kill kills, is restarted from the beginning on the same address; the peers
of a killed replica are expected to fail too, and restart. A frozen one
(:STOP) stays frozen: each trainer's watchdog ends it (exit 75) when it makes
no progress for longer than its bound (VTRAIN_STUCK_FLOOR, 20 s here), and the
restart policy does the rest. On a terminal a live view shows each replica's
step, rate, last commit and state. A job that
succeeds ends with where its model, checkpoints and logs are. A replica whose
script refuses its arguments (a usage error, exit status 2) is not restarted.
The rehearsal ends with its verdict: "verdict: ready to submit", or "verdict:
not ready: N findings" and a line each (checks: job, kill, local-disk, loopback,
leader, metric, resume, args); a job that did not succeed, or a --kill that
never fired, is a finding. Then a line for each thing it could not check here
("not checked: ...") and each no rehearsal on one machine reproduces ("not
rehearsed: ...": accelerators, machine types, the network's speed, NCCL).
"""


def add_parser(subparsers: Any) -> None:
    """Register `local` and its `run` sub-command."""
    local = subparsers.add_parser(
        "local",
        help="rehearse a multi-replica job on this machine",
        description="Rehearse a multi-replica job on this machine.",
    )
    sub = local.add_subparsers(dest="local_command", metavar="COMMAND", required=True)
    run = sub.add_parser(
        "run",
        help="run one process per replica, as the platform would",
        description="Run COMMAND once per replica, each with its platform's environment.",
        epilog=_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "--job",
        metavar="JOB.yaml",
        help="rehearse this CustomJob, HyperparameterTuningJob, config.yaml or Kubeflow "
        "manifest: its topology, args and env (needs the submit extra); COMMAND then "
        "stands in for the document's program (`python -m trainer.task`, the image's "
        "entrypoint) and the document's args follow it; an interpreter alone (`python`) "
        "runs the document's script",
    )
    run.add_argument("--workers", type=integer, default=0, metavar="N", help="workers (default 0)")
    run.add_argument("--ps", type=integer, default=0, metavar="M", help="parameter servers")
    run.add_argument("--evaluators", type=integer, default=0, metavar="K", help="evaluators")
    run.add_argument(
        "--platform", choices=PLATFORMS, help="whose environment to give (default vertex)"
    )
    run.add_argument(
        "--use-chief",
        action="store_true",
        help="AI Platform: name the chief 'chief' in TF_CONFIG (useChiefInTfConfig)",
    )
    run.add_argument(
        "--output-dir",
        metavar="DIR",
        help="the job's base output folder (default ./vtrain-output/local/JOB_ID); one job "
        "at a time: a second job there stops at once, naming the first",
    )
    run.add_argument("--job-id", metavar="ID", help="CLOUD_ML_JOB_ID (default: made up)")
    run.add_argument(
        "--resume-from",
        metavar="CHECKPOINT_DIR",
        help="continue an old job: until this job commits a step of its own, it resumes from "
        "the newest committed step in CHECKPOINT_DIR (the old job's AIP_CHECKPOINT_DIR, given "
        "to every replica as VTRAIN_RESUME_FROM, as `vtrain submit --resume-from` does); the "
        "old folder is only read, never copied or changed",
    )
    run.add_argument("--trial", metavar="ID", help="run as this hyperparameter-tuning trial")
    run.add_argument(
        "--max-restarts",
        type=integer,
        default=DEFAULT_MAX_RESTARTS,
        metavar="N",
        help=f"restarts of a failing replica before the job fails (default {DEFAULT_MAX_RESTARTS})",
    )
    run.add_argument(
        "--restart-job-on-worker-restart",
        action="store_true",
        help="restart every replica together when one fails (always so with torchrun)",
    )
    run.add_argument(
        "--kill",
        action="append",
        default=[],
        metavar="ROLE:INDEX@SECONDS[:SIGNAL]",
        help="kill that replica that many seconds in (SIGKILL; :TERM for a preemption, a spot "
        "reclaim: SIGTERM, then SIGKILL 30 s later unless it exited, then the restart; :STOP "
        "for a machine that hangs: frozen until its peers' watchdogs and a restart end it)",
    )
    run.add_argument(
        "--slow",
        action="append",
        default=[],
        metavar="ROLE:INDEX@SECONDS:FACTOR",
        help="make that replica FACTOR times slower from that many seconds in, as a slow machine "
        "(stopped and continued in a duty cycle): its peers' straggler line names it",
    )
    run.add_argument(
        "--timeout", type=seconds, metavar="SECONDS", help="stop the job and fail after this long"
    )
    run.add_argument(
        "--grace",
        type=seconds,
        default=DEFAULT_GRACE_SECONDS,
        metavar="SECONDS",
        help=f"from SIGTERM to SIGKILL when stopping a replica (default {DEFAULT_GRACE_SECONDS:g})",
    )
    run.add_argument(
        "--quiet-after",
        type=seconds,
        default=DEFAULT_QUIET_AFTER,
        metavar="SECONDS",
        help="when no replica has printed for this long, say what each one last said "
        f"(default {DEFAULT_QUIET_AFTER:g})",
    )
    run.add_argument(
        "--plain",
        action="store_true",
        help="no live view, even on a terminal: the replicas' lines as they come and, every "
        "--progress-every seconds, a line per trainer, as when the output is not a terminal",
    )
    run.add_argument(
        "--progress-every",
        type=seconds,
        metavar="SECONDS",
        help="seconds between two progress lines without the live view "
        f"(default {DEFAULT_PROGRESS_EVERY:g})",
    )
    run.add_argument(
        "--verbose",
        action="store_true",
        help="show framework noise too (TensorFlow's and absl's start-up banner, Lightning's "
        "tips, repeated retracing warnings), which otherwise goes to the replica logs alone",
    )
    run.add_argument(
        "--shared-disk",
        action="store_true",
        help="run every replica in this folder with one HOME and TMPDIR (no disk of its own)",
    )
    run.add_argument(
        "--no-model",
        action="store_true",
        help="the job writes no model by design: the verdict then does not expect one in "
        "AIP_MODEL_DIR (it still finds a model written by more than one replica)",
    )
    run.add_argument(
        "--track",
        type=track_option,
        metavar="BACKENDS",
        help="where handle.track writes besides the job's own record (VTRAIN_TRACK): mlflow "
        "(a tracking server of the job's own, its store in the job's folder, unless "
        "MLFLOW_TRACKING_URI names one; needs the local-mlflow extra), tensorboard, both "
        "comma-separated, or none",
    )
    run.add_argument(
        "--report",
        action="store_true",
        help="write the job's report at the end (`vtrain report`: one HTML file, its timeline, "
        "goodput, metrics and verdict) and print its path",
    )
    run.add_argument(
        "--verdict-json",
        metavar="PATH",
        help='also write the verdict here: {"ready": bool, "findings": [{"check", "replica", '
        '"detail"}...], "notes", "not_checked", "not_rehearsed": [...]}',
    )
    # Not `command`: the top-level parser keeps the sub-command's name there.
    run.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]")
    run.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    # Imported here: `vtrain local --help` need not load the launcher.
    from vtrain.errors import LaunchError
    from vtrain.local import Plan, run_job
    from vtrain.local.live import Display
    from vtrain.local.reaper import reaping
    from vtrain.os_hints import OUT_OF_DESCRIPTORS, hint_for

    topology: dict[str, Any] = {
        "output_dir": args.output_dir,
        "job_id": args.job_id,
        "platform": args.platform or "vertex",
        "workers": args.workers,
        "ps": args.ps,
        "evaluators": args.evaluators,
        "use_chief": args.use_chief,
        "trial_id": args.trial,
        "restart_job": args.restart_job_on_worker_restart,
    }
    if args.job is not None:
        topology = _rehearsal(args)
    if args.resume_from is not None:
        topology["role_env"] = _resuming(args.resume_from, topology.get("role_env"))
    plan = Plan.from_options(
        args.argv,
        max_restarts=args.max_restarts,
        kills=args.kill,
        slows=args.slow,
        timeout=args.timeout,
        grace=args.grace,
        quiet_after=args.quiet_after,
        shared_disk=args.shared_disk,
        **topology,
    )
    display = Display.from_options(
        plain=args.plain, verbose=args.verbose, progress_every=args.progress_every
    )
    try:
        # What a replica orphans comes back to us, and goes with the job.
        with reaping(), console_notes():
            result = run_job(plan, no_model=args.no_model, display=display, track=args.track)
            status = result.status
    except OSError as e:
        # A descriptor limit can strike at any pipe, socket or file the launcher opens;
        # which one it was says nothing, the limit does.
        if e.errno not in OUT_OF_DESCRIPTORS:
            raise
        raise LaunchError(
            f"cannot run the job: {e.strerror}", value=f"{plan.size} replicas", hint=hint_for(e)
        ) from e
    try:
        if status == 0:
            say(_outputs(plan))
        _goodput(plan.trial_dir)
        if result.verdict is not None:
            say(result.verdict.text(), end="")
            from vtrain.local.verdict import VERDICT_FILE  # kept with the job, for `vtrain report`

            _write_verdict(os.path.join(plan.trial_dir, VERDICT_FILE), result.verdict.to_json())
            if args.verdict_json:
                _write_verdict(args.verdict_json, result.verdict.to_json())
            if args.job is not None:
                _on_record(args.job, result.verdict, no_model=args.no_model)
        if args.report:
            from vtrain.report import write_report

            say(f"report: {write_report(plan.trial_dir)}")
        sys.stdout.flush()
    except OSError:
        # Whoever read our output left (`| head`): let the interpreter's last flush go
        # nowhere, or it would turn the job's exit status into 120.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return status


def _goodput(folder: str) -> None:
    """The job's goodput in one line, from its timeline (nothing where no replica trained)."""
    from vtrain.timeline.reader import read_job

    found = read_job(folder).goodput
    if found is not None:
        say(found.line())


def _log() -> logging.Logger:
    """This command's logger (`logging` is imported once a line is said, not at start-up)."""
    from vtrain.log import logger

    return logger(__name__)


@contextlib.contextmanager
def console_notes() -> Iterator[None]:
    """Show the job's notes (`vtrain.local.notes`) on its console while it runs, as vtrain
    always has: under vtrain's prefix, in its colour, among the replicas' lines."""
    import logging

    from vtrain.local.notes import LOGGER, OUTPUT, REPLICA
    from vtrain.log import logger

    class Console(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            output = getattr(record, OUTPUT, None)
            try:
                if output is None:  # not a note about the job: a line on stderr, as always
                    complain(record.getMessage())
                else:
                    output.note(record.getMessage(), getattr(record, REPLICA, None))
            except (OSError, ValueError):  # a closed stderr: nothing to say it on
                pass

    local, console = logger(LOGGER), Console()
    local.addHandler(console)
    # Its records reach the console once, through this handler, not vtrain's default one too.
    propagate, local.propagate = local.propagate, False
    try:
        yield
    finally:
        local.removeHandler(console)
        local.propagate = propagate


def _resuming(folder: str, role_env: Any) -> dict[str, dict[str, str]]:
    """Every role's variables, with VTRAIN_RESUME_FROM naming `folder`, checked to hold a step."""
    from vtrain.checkpoints import CheckpointManager
    from vtrain.errors import UsageError
    from vtrain.local.plan import LOCAL_ROLES
    from vtrain.variables import RESUME_FROM

    local = "://" not in folder
    where = os.path.abspath(folder) if local else folder
    from vtrain.local.environment import inherited

    # Checked now: a typo would otherwise start every replica afresh, or fail them all later.
    # With what a replica inherits: storage settings, no cluster of a parent job.
    manager = CheckpointManager(
        where, is_leader=False, per_trial=False, environ=inherited(os.environ)
    )
    if manager.latest_step() is None:
        raise UsageError(
            "no committed step to continue from",
            source="--resume-from",
            value=folder,
            expected="the checkpoint folder of a job that committed a step",
            hint="a local job's is OUTPUT/checkpoints (its summary names it)",
        )
    given = dict(role_env or {})
    return {role: {**given.get(role, {}), RESUME_FROM: where} for role in LOCAL_ROLES}


def _on_record(job: str, verdict: Any, *, no_model: bool) -> None:
    """Record the verdict of the document `job` for `vtrain submit`; a failure only says so."""
    from vtrain.local.on_record import record
    from vtrain.submit.job_file import read_job

    try:
        record(read_job(job).document, verdict, no_model=no_model)
    except OSError as e:
        _log().info(f"vtrain local: note: the verdict is not on record ({e})")


def _write_verdict(path: str, text: str) -> None:
    from vtrain.errors import LaunchError
    from vtrain.os_hints import hint_for

    try:
        with open(path, "w") as f:
            f.write(text + "\n")
    except OSError as e:
        raise LaunchError(
            f"cannot write the verdict ({e.strerror or e})",
            source="--verdict-json",
            value=path,
            expected="a file this user can write",
            hint=hint_for(e),
        ) from None


def _outputs(plan: Plan) -> str:
    """Where the job's model, checkpoints, logs and metrics are: a line each."""
    from vtrain.context import output_dirs
    from vtrain.local.environment import metric_file
    from vtrain.local.output import log_path
    from vtrain.outputs import summary

    base = plan.output_dir
    if plan.output_uri:  # its objects, kept in the job's folder (vtrain.local.bucket)
        base = os.path.join(plan.trial_dir, "gcs", plan.output_uri[len("gs://") :])
    dirs = output_dirs(base, plan.trial_id)
    rows = [
        ("model", dirs["AIP_MODEL_DIR"]),
        ("checkpoints", dirs["AIP_CHECKPOINT_DIR"]),
        ("TensorBoard logs", dirs["AIP_TENSORBOARD_LOG_DIR"]),
        ("tuning metrics", os.path.dirname(metric_file(plan, plan.replicas()[0])) + os.sep),
        ("replica logs", os.path.dirname(log_path(plan.trial_dir, "chief")) + os.sep),
    ]
    return summary(rows, dirs["AIP_TENSORBOARD_LOG_DIR"], title="outputs of this job:")


def _rehearsal(args: argparse.Namespace) -> dict[str, Any]:
    """The topology of the job file `--job` names, refusing flags that would contradict it."""
    from vtrain.errors import UsageError, raise_all
    from vtrain.redact import redact_text

    # --workers may differ from the document: a resubmission with another worker count
    # (capacity, spot VMs left) resumes the same AIP_CHECKPOINT_DIR; the rehearsal does too.
    given = {
        "--platform": args.platform,
        "--ps": args.ps,
        "--evaluators": args.evaluators,
        "--use-chief": args.use_chief,
    }
    raise_all(
        [
            UsageError(
                "the job file sets this", source=flag, value=value, expected=f"no {flag} with --job"
            )
            for flag, value in given.items()
            if value
        ]
    )
    import time

    from vtrain.submit.job_file import read_job
    from vtrain.submit.rehearse import rehearsal

    command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    # The job's folders must be known before the plan: config.yaml's jobDir names one.
    job_id = args.job_id or time.strftime("local-%Y%m%d-%H%M%S-") + str(os.getpid())
    output = args.output_dir or os.path.join("vtrain-output", "local", job_id)
    base = output if output.startswith("gs://") else os.path.abspath(output)  # gs://: Plan's
    found = rehearsal(read_job(args.job), command, args.trial, base)
    log = _log()
    for line in _command_lines(found.options["role_commands"], command):
        log.info(f"vtrain local: {line}")
    for note in found.notes:
        log.info(f"vtrain local: note: {redact_text(note)}")
    options = found.options
    options.update(output_dir=base, job_id=job_id)
    if args.workers and args.workers != options.get("workers"):
        log.info(
            f"vtrain local: note: {args.workers} workers instead of the document's "
            f"{options.get('workers', 0)}, as a resubmission with another worker count would "
            "run (CLUSTER_SPEC's job is still the document's)"
        )
        options["workers"] = args.workers
    options["restart_job"] = options.get("restart_job") or args.restart_job_on_worker_restart
    return options


def _command_lines(role_commands: dict[str, list[str]], local: list[str]) -> list[str]:
    """What the replicas run, once per distinct command, and where its words came from."""
    import shlex

    from vtrain.redact import redact_text
    from vtrain.submit.program import interpreter_alone, python_program_end

    by_command: dict[tuple[str, ...], list[str]] = {}
    for role, command in role_commands.items():
        by_command.setdefault(tuple(command), []).append(role)
    lines = []
    for argv, roles in by_command.items():
        if not local:
            origin = "the document's own"
        elif interpreter_alone(local) and python_program_end(argv) is not None:
            origin = "your interpreter, then the document's script and args"
        elif len(argv) > len(local):
            origin = "the document's args after your command"
        else:
            origin = "your command; the document has no args"
        who = "" if len(by_command) == 1 else f" ({', '.join(roles)})"
        lines.append(f"command{who}: {redact_text(shlex.join(argv))} ({origin})")
    return lines
