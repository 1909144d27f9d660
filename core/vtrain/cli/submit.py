"""`vtrain submit {vertex|aiplatform|kubeflow}`: the job you rehearsed, on the real engine."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from vtrain.cli.arguments import integer, seconds
from vtrain.cli.output import complain

if TYPE_CHECKING:
    from vtrain.submit.delivery import Delivery
    from vtrain.submit.engine import Engine
    from vtrain.submit.options import JobOptions

# What an engine's flag may name as its "type" (an engine's folder holds data, not the CLI's code).
TYPES = {"integer": integer, "seconds": seconds}
# The shared flags that build a job; with --job the document says all of that itself.
BUILD_FLAGS = (
    "workers",
    "ps",
    "evaluators",
    "image",
    "machine_type",
    "accelerator",
    "worker_image",
    "ps_image",
    "evaluator_image",
    "chief_machine_type",
    "worker_machine_type",
    "ps_machine_type",
    "evaluator_machine_type",
    "chief_accelerator",
    "worker_accelerator",
    "ps_accelerator",
    "evaluator_accelerator",
    "output_dir",
    "service_account",
    "network",
    "timeout",
    "spot",
    "env",
    "label",
    "study",
    "framework",
    "argv",
)
ROLES = ("chief", "worker", "ps", "evaluator")

_EXAMPLE = """\
examples:
  vtrain render vertex --workers 2 --ps 1 --image gcr.io/p/train:1 \\
      --output-dir gs://bucket/run1 -o job.yaml -- python -m trainer.task
  vtrain local run --job job.yaml -- python -m trainer.task     # rehearse it here
  vtrain submit vertex --job job.yaml --project my-project --region us-central1 --wait

-- CMD ARGS replaces the image's ENTRYPOINT; -- --flag ... (flags first) passes
arguments to the entrypoint instead. Per-role flags (--worker-image, --ps-machine-type,
--evaluator-accelerator ...) fall back to the chief's value, as AI Platform's images do,
except accelerators: parameter servers and evaluators get none unless --ps-accelerator
or --evaluator-accelerator asks for one.
"""


def add_parser(subparsers: Any) -> None:
    """Register `vtrain submit`."""
    register(subparsers, "submit", dry_run=False)


def register(subparsers: Any, name: str, *, dry_run: bool) -> None:
    """Register `vtrain NAME PLATFORM`: `submit` sends, `render` (`dry_run`) only prints."""
    from vtrain import plugins
    from vtrain.submit.engines import ENGINES

    # Read once for every platform: the names only, no plugin is imported for this.
    frameworks = plugins.available()
    verb = "print" if dry_run else "send"
    top = subparsers.add_parser(
        name,
        help=f"{verb} a job for Vertex AI, AI Platform or Kubeflow",
        description=f"Render the job for PLATFORM, check it with the engine's own types, "
        f"and {verb} it.",
    )
    sub = top.add_subparsers(dest="platform", metavar="PLATFORM", required=True)
    for engine in ENGINES.values():
        what = engine.about
        parser = sub.add_parser(
            engine.name,
            help=what,
            description=what[0].upper() + what[1:] + ".",
            epilog=_EXAMPLE,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_job_arguments(parser, frameworks, tuple(ENGINES.values()))
        parser.set_defaults(run=run, always_dry_run=dry_run)


def add_job_arguments(
    p: argparse.ArgumentParser, frameworks: tuple[str, ...], engines: tuple[Engine, ...]
) -> None:
    """The flags of `vtrain submit PLATFORM` and `vtrain render PLATFORM`: the shared ones,
    then each engine's own (every platform takes them: another's rules refuse them by name)."""
    p.add_argument(
        "--job",
        metavar="JOB.yaml",
        help="send this rendered or hand-written document instead of building one from flags",
    )
    p.add_argument("--name", help="display name / job id / metadata.name (default: from the clock)")
    topo = p.add_argument_group("topology (as in `vtrain local run`)")
    topo.add_argument("--workers", type=integer, default=0, metavar="N", help="workers (pool 1)")
    topo.add_argument(
        "--ps", type=integer, default=0, metavar="M", help="parameter servers (pool 2)"
    )
    topo.add_argument(
        "--evaluators", type=integer, default=0, metavar="K", help="evaluators (pool 3)"
    )
    machines = p.add_argument_group("images and machines (per-role flags fall back to the chief's)")
    machines.add_argument("--image", metavar="URI", help="the chief's container image")
    machines.add_argument("--machine-type", metavar="TYPE", help="e.g. n1-standard-8")
    machines.add_argument(
        "--accelerator",
        metavar="TYPE:COUNT",
        help="e.g. NVIDIA_TESLA_T4:2; none for no accelerator",
    )
    for role in ("chief", "worker", "ps", "evaluator"):
        if role != "chief":
            machines.add_argument(f"--{role}-image", metavar="URI", help=f"the {role}s' image")
        machines.add_argument(
            f"--{role}-machine-type", metavar="TYPE", help=f"the {role}'s machine"
        )
        default = (
            "default: --accelerator"
            if role in ("chief", "worker")
            else "default: none, as parameter servers and evaluators rarely use one"
        )
        machines.add_argument(
            f"--{role}-accelerator",
            metavar="TYPE:COUNT",
            help=f"the {role}'s accelerator, or none ({default})",
        )
    job = p.add_argument_group("job")
    job.add_argument("--region", help="default us-central1")
    job.add_argument("--project", help="project id or number")
    job.add_argument(
        "--output-dir",
        metavar="gs://BUCKET/PATH",
        help="baseOutputDirectory (Vertex), jobDir (AI Platform), AIP_* dirs (Kubeflow)",
    )
    job.add_argument("--service-account", metavar="EMAIL")
    job.add_argument("--network", metavar="NETWORK", help="projects/NUMBER/global/networks/NAME")
    job.add_argument("--timeout", metavar="DURATION", help="3600, 3600s, 90m or 2h")
    job.add_argument(
        "--spot",
        action="store_true",
        help="Spot VMs: Vertex's scheduling strategy SPOT; on Kubeflow, GKE's spot nodes "
        "(node selector and toleration). A reclaim is SIGTERM, then SIGKILL about 30 s later",
    )
    job.add_argument("--env", action="append", default=[], metavar="K=V")
    job.add_argument(
        "--resume-from",
        metavar="CHECKPOINT_DIR",
        help="continue an old job: until this job commits a step of its own, it resumes from "
        "the newest committed step in CHECKPOINT_DIR (the old job's gs://.../checkpoints), "
        "given to every replica as VTRAIN_RESUME_FROM; the old folder is only read",
    )
    job.add_argument("--label", action="append", default=[], metavar="K=V")
    job.add_argument(
        "--study",
        metavar="STUDY.yaml",
        help="the study file `vtrain tune` runs: a HyperparameterTuningJob (Vertex), "
        "hyperparameters (AI Platform) or a Katib Experiment (Kubeflow)",
    )
    job.add_argument(
        "--framework",
        choices=frameworks,
        help="the installed vtrain plugin whose job this is: its Kubeflow TrainJob runtime "
        "(--trainjob), or its v1 job kind (TFJob, PyTorchJob ...: the retiring API)",
    )
    for engine in engines:
        group = p.add_argument_group(engine.title)
        for flag in engine.flags:
            settings = dict(flag.settings)
            if "type" in settings:
                settings["type"] = TYPES[settings["type"]]
            group.add_argument(flag.name, **settings)
    out = p.add_argument_group("output")
    out.add_argument("--dry-run", action="store_true", help="print the job; send nothing")
    out.add_argument("--format", choices=("yaml", "json"), default="yaml")
    out.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the whole document (credentials too) to FILE instead of printing it; "
        "FILE is made readable by this user only (mode 0600)",
    )
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]")


def run(args: argparse.Namespace) -> int:
    """Render, check, and print or send the job."""
    # Imported here: `vtrain --help` and the other commands never load the submit path.
    from vtrain.document_strings import check_flags
    from vtrain.submit import flow

    # Files on this machine may have any name; every other value goes into the job.
    check_flags(vars(args), local=("job", "output", "study", "kubeconfig", "python_package"))
    delivery = _delivery(args)
    flow.check_delivery(args.platform, delivery)
    if getattr(args, "runtime", None) is not None:
        return _runtime(args, delivery)
    if args.job is not None:
        _refuse_build_flags(args)
        job = flow.read(args.platform, args.job, name=args.name)
        options = None
    else:
        options = job_options(args)
        job = flow.render(options)
        if options.restart_reason:
            complain(
                f"vtrain: restartJobOnWorkerRestart set: {options.restart_reason}; one replica's "
                "restart restarts the whole job, which resumes from its last checkpoint"
            )
    sends = flow.sends(job.platform, delivery)
    if args.job is not None and not sends:
        # A dry run is where the decision is made: what the rehearsal said comes first.
        _say_rehearsed(job.document)
    sent = flow.submit(job, options, delivery)
    if sends:
        # Sent, it informs only: a refusal stays the one line it is.
        _say_rehearsed(job.document)
    return sent


def _runtime(args: argparse.Namespace, delivery: Delivery) -> int:
    """`vtrain render kubeflow --runtime NAME`: vtrain's ClusterTrainingRuntime, alone."""
    from vtrain.errors import Problems
    from vtrain.submit.delivery import print_document
    from vtrain.submit.engines import ENGINES

    problems = Problems()
    runtime = ENGINES[args.platform].runtime
    if runtime is None:
        problems.bad("--runtime", "a runtime is Kubeflow Trainer's", args.runtime, "kubeflow")
    if not delivery.dry_run:
        problems.bad(
            "--runtime",
            "a cluster admin applies a ClusterTrainingRuntime, once",
            args.runtime,
            "vtrain render kubeflow --runtime NAME | kubectl apply -f -",
        )
    for name in ("job", "trainjob", "study", "framework", "argv"):
        if getattr(args, name, None):
            where = f"--{name}" if name != "argv" else "COMMAND"
            problems.bad(where, "--runtime prints the runtime alone", getattr(args, name), "none")
    problems.raise_all()
    assert runtime is not None  # refused above
    print_document(delivery, runtime(args.runtime))
    return 0


def _say_rehearsed(document: dict[str, Any]) -> None:
    """What a rehearsal of this very document said (`vtrain local run --job`)."""
    from vtrain.local.on_record import status

    complain(f"vtrain: {status(document)}")


def _engine_values(args: argparse.Namespace, where: str) -> dict[str, Any]:
    """What each engine's own flags give to `where` ("option" or "delivery"), by keyword."""
    from vtrain.submit.engines import ENGINES

    return {
        getattr(flag, where): getattr(args, flag.dest)
        for engine in ENGINES.values()
        for flag in engine.flags
        if getattr(flag, where) is not None
    }


def job_options(args: argparse.Namespace) -> JobOptions:
    """The command line's job as checked `JobOptions`: the one place that reads its flags."""
    from vtrain.submit.engines import RULES
    from vtrain.submit.options import JobOptions

    def per_role(setting: str) -> dict[str, str]:
        # --worker-image, --ps-machine-type, --chief-accelerator ...: set ones only.
        found = {role: getattr(args, f"{role}_{setting}", None) for role in ROLES}
        return {role: value for role, value in found.items() if value is not None}

    return JobOptions.from_options(
        args.platform,
        args.argv,
        rules=RULES,
        name=args.name,
        workers=args.workers,
        ps=args.ps,
        evaluators=args.evaluators,
        image=args.image,
        machine_type=args.machine_type,
        accelerator=args.accelerator,
        role_images=per_role("image"),
        role_machine_types=per_role("machine_type"),
        role_accelerators=per_role("accelerator"),
        region=args.region,
        project=args.project,
        output_dir=args.output_dir,
        service_account=args.service_account,
        network=args.network,
        timeout=args.timeout,
        spot=args.spot,
        env=args.env,
        labels=args.label,
        study=args.study,
        framework=args.framework,
        resume_from=args.resume_from,
        **_engine_values(args, "option"),
    )


def _delivery(args: argparse.Namespace) -> Delivery:
    from vtrain.cli import output
    from vtrain.submit.delivery import Delivery

    return Delivery(
        terminal=output,
        dry_run=args.dry_run or args.always_dry_run,
        format=args.format,
        output=args.output,
        job_name=args.name,
        project=args.project,
        region=args.region,
        **_engine_values(args, "delivery"),
    )


def _refuse_build_flags(args: argparse.Namespace) -> None:
    """With --job the document says how the job is built: a flag that would too is refused."""
    from vtrain.errors import Problems
    from vtrain.submit.engines import ENGINES

    builds = [f.dest for engine in ENGINES.values() for f in engine.flags if f.builds]
    problems = Problems()
    for name in (*BUILD_FLAGS, *builds):
        value = getattr(args, name)
        if value not in (None, False, 0, []):
            where = f"--{name.replace('_', '-')}" if name != "argv" else "COMMAND"
            problems.bad(where, "the job file says this", value, "no such flag with --job")
    problems.raise_all()
