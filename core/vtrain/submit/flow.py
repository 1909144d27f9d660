"""What `vtrain submit` and `vtrain render` do, in order: build or read, check, print or send.

Nothing is sent before every check has passed, and nothing printed carries
a credential: the printed document goes through `vtrain.redact`; only a
file the user names with `--output` holds the whole document.
"""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

from vtrain.errors import UsageError, raise_all
from vtrain.redact import redact
from vtrain.submit.job_file import JobDocument
from vtrain.submit.topology import JobOptions

# The flags that build a job; with --job the document says all of that itself.
BUILD_FLAGS = (
    "workers",
    "ps",
    "evaluators",
    "reduction_servers",
    "reduction_server_machine_type",
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
    "restart_job_on_worker_restart",
    "env",
    "label",
    "study",
    "python_package",
    "python_module",
    "executor_image",
    "staging",
    "framework",
    "trainjob",
    "argv",
)


def submit(args: Any) -> int:
    """Run `vtrain submit PLATFORM` / `vtrain render PLATFORM`; the exit status."""
    platform = args.platform
    dry_run = args.dry_run or args.always_dry_run or platform == "aiplatform"
    if args.wait and platform != "vertex":
        raise UsageError(
            "only a Vertex job is followed", source="--wait", value=platform, expected="vertex"
        )
    if args.wait and dry_run:
        raise UsageError(
            "nothing is sent to follow",
            source="--wait",
            value="--dry-run",
            expected="--wait without --dry-run or render",
        )
    options: JobOptions | None = None
    if args.job is not None:
        job = _from_file(args)
    else:
        options = JobOptions.from_args(platform, args)
        job = _render(options)
    if platform == "aiplatform":
        return _print_aiplatform(args, job, options)
    if dry_run:
        _print(args, job.document)
        return 0
    if (
        options is not None
        and options.python_module
        and args.python_package
        and not (args.python_package.startswith("gs://"))
    ):
        from vtrain.submit.staging import stage

        uri = stage(args.python_package, args.staging)
        print(f"vtrain submit: staged {args.python_package} as {uri}", file=sys.stderr)
    if platform == "vertex":
        from vtrain.submit.send_vertex import follow, send

        project = args.project
        if not project:
            raise UsageError(
                "missing",
                source="--project",
                expected="the Google Cloud project id or number to run the job in",
            )
        sent = send(
            job, project=project, region=args.region or "us-central1", endpoint=args.api_endpoint
        )
        print(sent.name)
        print(f"vtrain submit: console: {sent.console_url}", file=sys.stderr)
        if args.wait:
            return follow(sent, poll=args.poll)
        return 0
    from vtrain.submit.send_kubeflow import send as send_kubeflow

    namespace = args.namespace or job.document.get("metadata", {}).get("namespace") or "default"
    name = send_kubeflow(job, namespace=namespace, kubeconfig=args.kubeconfig, context=args.context)
    print(name)
    return 0


def _render(options: JobOptions) -> JobDocument:
    from importlib import import_module

    kind, document = import_module(f"vtrain.submit.{options.platform}").render(options)
    return JobDocument(options.platform, kind, document, f"vtrain submit {options.platform}")


def _from_file(args: Any) -> JobDocument:
    """The document `--job` names, checked; flags that would contradict it are refused."""
    given = [name for name in BUILD_FLAGS if getattr(args, name, None) not in (None, False, 0, [])]
    raise_all(
        [
            UsageError(
                "the job file says this",
                source=f"--{name.replace('_', '-')}" if name != "argv" else "COMMAND",
                value=getattr(args, name),
                expected="no such flag with --job",
            )
            for name in given
        ]
    )
    from vtrain.submit.job_file import read_job

    job = read_job(args.job)
    if job.platform != args.platform:
        raise UsageError(
            f"the file is a {job.kind} for {job.platform}",
            source="--job",
            value=args.job,
            expected=f"a job for {args.platform}",
        )
    if args.name:
        document = dict(job.document)
        if job.platform == "vertex":
            document["displayName"] = args.name
        elif job.platform == "kubeflow":
            document["metadata"] = {**document.get("metadata", {}), "name": args.name}
        job = JobDocument(job.platform, job.kind, document, job.source)
    return job


def dump(document: Any, fmt: str) -> str:
    """`document` as YAML or JSON text."""
    if fmt == "json":
        return json.dumps(document, indent=2) + "\n"
    from vtrain.submit.sdk import yaml_module

    text: str = yaml_module().safe_dump(document, sort_keys=False, default_flow_style=False)
    return text


def _print(args: Any, document: Any) -> None:
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(dump(document, args.format))
        print(f"vtrain: wrote {args.output}", file=sys.stderr)
        return
    sys.stdout.write(dump(redact(document), args.format))


def _print_aiplatform(args: Any, job: JobDocument, options: JobOptions | None) -> int:
    from vtrain.submit.aiplatform import RETIRED, gcloud_words

    flags_only = bool(args.flags_only)
    if not flags_only:
        _print(args, job.document)
    if options is None:
        words = [
            "gcloud",
            "ai-platform",
            "jobs",
            "submit",
            "training",
            args.name or "JOB_ID",
            f"--region={job.document['trainingInput'].get('region')}",
            f"--config={args.job}",
        ]
    else:
        words = gcloud_words(options, args.output or "config.yaml", flags_only=flags_only)
    command = shlex.join(redact(words))
    if flags_only:
        print(command)
    else:
        print(f"vtrain: equivalent: {command}", file=sys.stderr)
    if not (args.dry_run or args.always_dry_run):
        print(f"vtrain submit: note: {RETIRED}", file=sys.stderr)
    return 0
