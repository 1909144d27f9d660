"""The job a `vtrain submit` command line asks for, checked before anything is rendered.

`JobOptions.from_options` takes the options as typed keyword arguments (the
CLI fills them from its flags), runs the shared checks and the chosen engine's
rules, and raises all the problems together, each naming the flag, the value
and what was expected. The engines' renderers then only translate the result.
The rules come from the caller (`vtrain.submit.engines.RULES`): the engines read
`JobOptions`, so this module names none of them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from vtrain.errors import UsageError, VtrainError
from vtrain.submit.experiment import fields as experiment_fields
from vtrain.submit.pools import Pool, build_pools
from vtrain.submit.problems import Problems, Rules
from vtrain.submit.request import JobRequest
from vtrain.submit.study import read_request_study
from vtrain.submit.values import parse_duration, parse_pairs, split_command
from vtrain.tune.study import Study

DEFAULT_REGION = "us-central1"
REDUCTION_MACHINE = "n1-highcpu-16"
# [0-9], not \d: in a str pattern \d also matches '١٢٣', which is no project number.
_PROJECT = re.compile(r"[0-9]+|[a-z][a-z0-9-]{4,28}[a-z0-9]")
_REGION = re.compile(r"[a-z]+(-[a-z0-9]+)+")


@dataclass(frozen=True)
class JobOptions:
    """A checked job, before it is rendered for a platform."""

    platform: str
    name: str
    pools: tuple[Pool, ...]
    """Chief, workers, ps and evaluators, in that order; a role with no replicas has count 0."""
    command: tuple[str, ...] = ()
    """Replaces the image's ENTRYPOINT; empty keeps it."""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    region: str = DEFAULT_REGION
    project: str | None = None
    output_dir: str | None = None
    service_account: str | None = None
    network: str | None = None
    timeout: int | None = None
    restart_job: bool = False
    restart_reason: str | None = None
    """Why `restart_job` is on though not asked for: the framework's plugin says so."""
    scheduling: str | None = None
    """SPOT or FLEX_START (Vertex's scheduling strategy); None: the engine's standard VMs."""
    max_wait: int | None = None
    """Seconds a FLEX_START job waits for its machines; None: Vertex's default."""
    reduction_servers: int = 0
    reduction_machine_type: str = REDUCTION_MACHINE
    study: Study | None = None
    use_chief: bool = True
    framework: str | None = None
    """The plugin whose Kubeflow job this is (its declaration names the kind)."""
    runtime: str | None = None
    """Kubeflow Trainer v2: the ClusterTrainingRuntime of a TrainJob ("": the framework's);
    None for a v1 job."""
    namespace: str = "default"
    python_package: str | None = None
    """Vertex's pre-built containers: the package's gs:// URI, or its local folder to stage."""
    python_module: str | None = None
    executor_image: str | None = None
    staging: str | None = None
    experiment: Mapping[str, str] = field(default_factory=dict)
    """The CustomJobSpec's experiment, experimentRun and tensorboard (those set)."""
    """Where a local --python-package is staged (gs://)."""

    def pool(self, role: str) -> Pool:
        """The pool of `role`."""
        return next(p for p in self.pools if p.role == role)

    def count(self, role: str) -> int:
        """How many replicas `role` has."""
        return self.pool(role).count

    @classmethod
    def from_options(
        cls,
        platform: str,
        argv: Sequence[str] = (),
        *,
        rules: Mapping[str, Rules],
        name: str | None = None,
        workers: int = 0,
        ps: int = 0,
        evaluators: int = 0,
        image: str | None = None,
        machine_type: str | None = None,
        accelerator: str | None = None,
        role_images: Mapping[str, str] | None = None,
        role_machine_types: Mapping[str, str] | None = None,
        role_accelerators: Mapping[str, str] | None = None,
        reduction_servers: int = 0,
        reduction_server_machine_type: str | None = None,
        region: str | None = None,
        project: str | None = None,
        output_dir: str | None = None,
        service_account: str | None = None,
        network: str | None = None,
        timeout: str | None = None,
        restart_job: bool = False,
        spot: bool = False,
        flex_start: bool = False,
        max_wait: str | None = None,
        env: Sequence[str] = (),
        labels: Sequence[str] = (),
        study: str | None = None,
        use_chief: bool = True,
        flags_only: bool = False,
        framework: str | None = None,
        trainjob: str | None = None,
        namespace: str | None = None,
        python_package: str | None = None,
        python_module: str | None = None,
        executor_image: str | None = None,
        staging: str | None = None,
        resume_from: str | None = None,
        experiment: str | None = None,
        experiment_run: str | None = None,
        tensorboard: str | None = None,
    ) -> JobOptions:
        """Check the job `vtrain submit PLATFORM` would send; all problems are raised together.

        `rules` are every engine's, by platform (`vtrain.submit.engines.RULES`).
        `argv` is what follows ``--``; per-role mappings go from a role (chief,
        worker, ps, evaluator) to that role's image, machine type or accelerator text.
        `resume_from` (an old job's checkpoint folder) goes to every replica as
        VTRAIN_RESUME_FROM, one of its `env`.
        """
        if platform not in rules:
            raise UsageError(
                "unknown platform", source="PLATFORM", value=platform, expected=" or ".join(rules)
            )
        request = JobRequest(
            platform=platform,
            argv=tuple(argv),
            name=name,
            workers=workers,
            ps=ps,
            evaluators=evaluators,
            image=image,
            machine_type=machine_type,
            accelerator=accelerator,
            role_images=dict(role_images or {}),
            role_machine_types=dict(role_machine_types or {}),
            role_accelerators=dict(role_accelerators or {}),
            reduction_servers=reduction_servers,
            reduction_server_machine_type=reduction_server_machine_type,
            region=region,
            project=project,
            output_dir=output_dir,
            service_account=service_account,
            network=network,
            timeout=timeout,
            restart_job=restart_job,
            spot=spot,
            flex_start=flex_start,
            max_wait=max_wait,
            env=tuple(env) + _resuming(resume_from),
            labels=tuple(labels),
            study=study,
            use_chief=use_chief,
            flags_only=flags_only,
            framework=framework,
            trainjob=trainjob,
            namespace=namespace,
            python_package=python_package,
            python_module=python_module,
            executor_image=executor_image,
            staging=staging,
            experiment=experiment,
            experiment_run=experiment_run,
            tensorboard=tensorboard,
        )
        return cls._checked(request, rules)

    @classmethod
    def _checked(cls, request: JobRequest, engines: Mapping[str, Rules]) -> JobOptions:
        rules = engines[request.platform]
        problems = Problems(request.platform)
        pools = build_pools(request, rules.default_machine, problems)
        command, job_args = split_command(request.argv)
        for word in request.argv:
            if "\0" in word:
                # What a replica's exec() would refuse; the platform would start it to find out.
                problems.bad(
                    "COMMAND", "a NUL character (\\0) in an argument", word, "arguments without NUL"
                )
        env, errors = parse_pairs("--env", request.env, env=True)
        problems.add(*errors)
        _check_resume_from(env, problems)
        labels, errors = parse_pairs("--label", request.labels, env=False, labels=rules.labels)
        problems.add(*errors)
        region = request.region or DEFAULT_REGION
        if not _REGION.fullmatch(region):
            problems.bad("--region", "not a region", region, "e.g. us-central1")
        if request.project is not None and not _PROJECT.fullmatch(request.project):
            problems.bad(
                "--project",
                "not a project number or id",
                request.project,
                "digits, or 6-30 lowercase letters, digits and '-' starting with a letter",
            )
        timeout = _duration(request.timeout, "--timeout", problems)
        max_wait = _duration(request.max_wait, "--max-wait", problems)
        for platform, other in engines.items():
            if platform != request.platform:
                other.elsewhere(request, problems)
        study = read_request_study(request, problems)
        rules.check(request, study, problems)
        problems.raise_all()
        restart_reason = None
        if rules.restarts_jobs and not request.restart_job:
            restart_reason = job_restarts(request.framework)
        name = request.name or default_name(rules.name_separator)
        return cls(
            platform=request.platform,
            name=name,
            pools=pools,
            command=command,
            args=job_args,
            env=env,
            labels=labels,
            region=region,
            project=request.project,
            output_dir=request.output_dir.rstrip("/") if request.output_dir else None,
            service_account=request.service_account,
            network=request.network,
            timeout=timeout,
            restart_job=request.restart_job or restart_reason is not None,
            restart_reason=restart_reason,
            scheduling="SPOT" if request.spot else "FLEX_START" if request.flex_start else None,
            max_wait=max_wait,
            reduction_servers=request.reduction_servers,
            reduction_machine_type=request.reduction_server_machine_type or REDUCTION_MACHINE,
            study=study,
            use_chief=request.use_chief,
            framework=request.framework,
            runtime=request.trainjob,
            namespace=request.namespace or "default",
            python_package=request.python_package,
            python_module=request.python_module,
            executor_image=request.executor_image,
            staging=request.staging,
            experiment=experiment_fields(
                request.project,
                region,
                name,
                request.experiment,
                request.experiment_run,
                request.tensorboard,
            ),
        )


def _resuming(folder: str | None) -> tuple[str, ...]:
    """`--resume-from` as the `--env` pair the replicas read (the core's restore does)."""
    from vtrain.variables import RESUME_FROM

    return () if folder is None else (f"{RESUME_FROM}={folder}",)


def _check_resume_from(env: Sequence[tuple[str, str]], problems: Problems) -> None:
    """Refuse a VTRAIN_RESUME_FROM the job's replicas could not read: it must be in the cloud."""
    from vtrain.variables import RESUME_FROM

    for name, value in env:
        if name == RESUME_FROM and not value.startswith(("gs://", "/gcs/")):
            problems.bad(
                "--resume-from",
                "not a Cloud Storage folder",
                value,
                "the old job's checkpoint folder, gs://BUCKET/PATH/checkpoints or /gcs/...",
                hint="the replicas read it in the cloud; a local folder is for "
                "`vtrain local run --resume-from`",
            )


def job_restarts(framework: str | None) -> str | None:
    """Why `framework`'s jobs must restart whole when one replica does (its plugin's word)."""
    if framework is None:
        return None
    from vtrain import plugins

    try:
        return plugins.get(framework).job_restarts
    except VtrainError:
        return None  # not installed here: --framework's own check names it


def _duration(text: str | None, flag: str, problems: Problems) -> int | None:
    if text is None:
        return None
    try:
        return parse_duration(text, flag)
    except VtrainError as e:
        problems.add(e)
        return None


def default_name(separator: str = "-") -> str:
    """A job name from the clock: ``vtrain-20250102-030405`` (AI Platform: ``_`` for ``-``)."""
    return time.strftime("vtrain-%Y%m%d-%H%M%S").replace("-", separator)
