"""The job a `vtrain submit` command line asks for, checked before anything is rendered.

`JobOptions.from_args` reads the parsed command line, checks every flag, and
raises all the problems together, each naming the flag, the value and what
was expected. What is left is platform-neutral: the renderers in `vertex`,
`aiplatform` and `kubeflow` only translate it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from vtrain.cluster.fields import MAX_DIGITS, natural
from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.errors import UsageError, VtrainError, raise_all
from vtrain.tune.study import Study

PLATFORMS = ("vertex", "aiplatform", "kubeflow")
ROLES = (CHIEF, WORKER, PS, EVALUATOR)
# The per-role flags are spelled after the role: --worker-image, --ps-machine-type ...
FLAG_ROLES = {CHIEF: "chief", WORKER: "worker", PS: "ps", EVALUATOR: "evaluator"}
COUNT_FLAGS = {WORKER: "--workers", PS: "--ps", EVALUATOR: "--evaluators"}
# Kubeflow has no machine catalogue: without --machine-type the pods take the cluster's nodes.
DEFAULT_MACHINE = {"vertex": "n1-standard-4", "aiplatform": "n1-standard-4", "kubeflow": None}
DEFAULT_REGION = "us-central1"
REDUCTION_MACHINE = "n1-highcpu-16"
# TFJob carries chief/worker/ps in TF_CONFIG, and the MXNet plugin maps those roles; so
# an MXNet job is a TFJob. PyTorch and XGBoost jobs have a master and workers only.
FRAMEWORKS = ("tensorflow", "mxnet", "pytorch", "xgboost")
# What the platform sets on each replica: a value given with --env would be overwritten
# there, or would lie to the reader here.
PLATFORM_OWNED = re.compile(
    r"CLUSTER_SPEC|TF_CONFIG|MASTER_ADDR|MASTER_PORT|WORLD_SIZE|RANK|AIP_\w*|CLOUD_ML_\w*"
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Vertex and AI Platform labels: lowercase letters, digits, '_' and '-', at most 63 each.
_LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
_LABEL_VALUE = re.compile(r"[a-z0-9_-]{0,63}")
# [0-9], not \d: in a str pattern \d also matches '١٢٣', which is no project number.
_PROJECT = re.compile(r"[0-9]+|[a-z][a-z0-9-]{4,28}[a-z0-9]")
_REGION = re.compile(r"[a-z]+(-[a-z0-9]+)+")
_NAMES = {
    # AI Platform job ids: letters, digits and underscores, starting with a letter.
    "aiplatform": (re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}"), "letters, digits and '_'"),
    # A Kubernetes object name (RFC 1123 label: the operator names Services after it).
    "kubeflow": (
        re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"),
        "lowercase letters, digits and '-', at most 63",
    ),
    "vertex": (re.compile(r"\S.{0,127}"), "1 to 128 characters"),
}
_DURATION = re.compile(rf"([0-9]{{1,{MAX_DIGITS}}})([smhd]?)")
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
SHELLS = ("sh", "bash", "dash", "zsh", "/bin/sh", "/bin/bash", "/usr/bin/env")


@dataclass(frozen=True)
class Accelerator:
    """An accelerator attached to every replica of a pool: its type and how many."""

    type: str
    count: int
    flag: str = field(default="--accelerator", compare=False)
    """The flag that asked for it, for errors found later (an unknown type)."""


@dataclass(frozen=True)
class Pool:
    """One role of the job: how many replicas, on what image, machine and accelerator."""

    role: str
    count: int
    image: str | None
    machine_type: str | None
    accelerator: Accelerator | None


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
    reduction_servers: int = 0
    reduction_machine_type: str = REDUCTION_MACHINE
    study: Study | None = None
    use_chief: bool = True
    framework: str | None = None
    runtime: str | None = None
    """Kubeflow Trainer v2: the ClusterTrainingRuntime of a TrainJob; None for a v1 job."""
    namespace: str = "default"
    python_module: str | None = None
    package_uris: tuple[str, ...] = ()
    executor_image: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def pool(self, role: str) -> Pool:
        """The pool of `role`."""
        return next(p for p in self.pools if p.role == role)

    def count(self, role: str) -> int:
        """How many replicas `role` has."""
        return self.pool(role).count

    @classmethod
    def from_args(cls, platform: str, args: Any) -> JobOptions:
        """Check the parsed command line of `vtrain submit PLATFORM`; all problems together."""
        return _Checker(platform, args).options()


def parse_accelerator(text: str, flag: str) -> Accelerator | None:
    """Read ``TYPE:COUNT``, ``TYPE`` (one) or ``none``."""
    expected = "TYPE:COUNT, e.g. NVIDIA_TESLA_T4:2, or none"
    if text.lower() == "none":
        return None
    kind, _, count_text = text.partition(":")
    if not kind or kind.isdigit():
        raise UsageError(
            "an accelerator count with no accelerator type", source=flag, value=text,
            expected=expected,
        )  # fmt: skip
    if not count_text:
        return Accelerator(kind, 1, flag)
    count = natural(count_text)
    if count is None or count < 1:
        raise UsageError("not an accelerator count", source=flag, value=text, expected=expected)
    return Accelerator(kind, count, flag)


def parse_duration(text: str, flag: str) -> int:
    """Seconds from ``3600``, ``3600s``, ``90m``, ``2h`` or ``7d``."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or int(match[1]) == 0:
        raise UsageError(
            "not a duration", source=flag, value=text, expected="a positive 3600, 3600s, 90m or 2h"
        )
    return int(match[1]) * _SECONDS[match[2]]


def split_command(argv: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``-- CMD ARGS`` -> (command, args); ``-- --flag ...`` keeps the image's entrypoint."""
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        return (), ()
    # Flags first: they are the arguments of the image's own ENTRYPOINT.
    if argv[0].startswith("-"):
        return (), tuple(argv)
    return (argv[0],), tuple(argv[1:])


def default_name(platform: str) -> str:
    """A job name from the clock: ``vtrain-20250102-030405`` (``_`` for AI Platform)."""
    name = time.strftime("vtrain-%Y%m%d-%H%M%S")
    return name.replace("-", "_") if platform == "aiplatform" else name


class _Checker:
    """Collects every problem of one command line before raising them together."""

    def __init__(self, platform: str, args: Any) -> None:
        self.platform = platform
        self.args = args
        self.errors: list[VtrainError] = []

    def bad(
        self, flag: str, problem: str, value: Any, expected: str, hint: str | None = None
    ) -> None:
        self.errors.append(
            UsageError(problem, source=flag, value=value, expected=expected, hint=hint)
        )

    def only_on(self, flag: str, value: Any, platforms: tuple[str, ...], why: str) -> None:
        """Refuse a flag that was given for a platform that cannot express it."""
        given = value not in (None, False, 0, [], ())
        if given and self.platform not in platforms:
            self.bad(flag, why, value, f"no {flag} with {self.platform}")

    def options(self) -> JobOptions:
        a, platform = self.args, self.platform
        name = a.name or default_name(platform)
        pattern, says = _NAMES[platform]
        if not pattern.fullmatch(name):
            self.bad("--name", f"not a {platform} job name", name, says)
        pools = self.pools()
        command, job_args = split_command(list(a.argv))
        env = self.pairs("--env", a.env, env=True)
        labels = self.pairs("--label", a.label, env=False)
        region = a.region or DEFAULT_REGION
        if not _REGION.fullmatch(region):
            self.bad("--region", "not a region", region, "e.g. us-central1")
        if a.project is not None and not _PROJECT.fullmatch(a.project):
            self.bad(
                "--project", "not a project number or id", a.project,
                "digits, or 6-30 lowercase letters, digits and '-' starting with a letter",
            )  # fmt: skip
        self.output_dir(a.output_dir)
        timeout = None
        if a.timeout is not None:
            try:
                timeout = parse_duration(a.timeout, "--timeout")
            except VtrainError as e:
                self.errors.append(e)
        self.platform_rules(command, env)
        study = self.study()
        if study is not None:
            from vtrain.submit.study_spec import check_study_args

            self.errors.extend(check_study_args(study, command, job_args, a.study))
        framework = getattr(a, "framework", None)
        runtime = self.trainjob()
        if platform == "kubeflow" and framework is None and runtime is None:
            self.bad(
                "--framework", "Kubeflow needs the job's kind", None,
                " or ".join(FRAMEWORKS) + ", or --trainjob [RUNTIME] for a Trainer v2 TrainJob",
            )  # fmt: skip
        if framework in ("pytorch", "xgboost"):
            for role, flag in ((PS, "--ps"), (EVALUATOR, "--evaluators")):
                n = next(p.count for p in pools if p.role == role)
                if n:
                    self.bad(
                        flag, f"a {framework} job has a master and workers only", n,
                        f"0 with --framework {framework}",
                        hint="a TFJob (--framework tensorflow or mxnet) has ps and evaluators",
                    )  # fmt: skip
        package_uris, module, executor = self.python_package(command)
        raise_all(self.errors)
        return JobOptions(
            platform=platform,
            name=name,
            pools=pools,
            command=command,
            args=job_args,
            env=env,
            labels=labels,
            region=region,
            project=a.project,
            output_dir=a.output_dir.rstrip("/") if a.output_dir else None,
            service_account=a.service_account,
            network=a.network,
            timeout=timeout,
            restart_job=bool(a.restart_job_on_worker_restart),
            reduction_servers=getattr(a, "reduction_servers", 0) or 0,
            reduction_machine_type=getattr(a, "reduction_server_machine_type", None)
            or REDUCTION_MACHINE,
            study=study,
            use_chief=getattr(a, "use_chief", True),
            framework=framework,
            runtime=runtime,
            namespace=getattr(a, "namespace", None) or "default",
            python_module=module,
            package_uris=package_uris,
            executor_image=executor,
        )

    def pools(self) -> tuple[Pool, ...]:
        a = self.args
        default_machine = a.machine_type or DEFAULT_MACHINE[self.platform]
        chief_machine = getattr(a, "chief_machine_type", None) or default_machine
        chief_accelerator = self.accelerator("--accelerator", a.accelerator)
        if getattr(a, "chief_accelerator", None) is not None:
            chief_accelerator = self.accelerator("--chief-accelerator", a.chief_accelerator)
        counts = {CHIEF: 1, WORKER: a.workers, PS: a.ps, EVALUATOR: a.evaluators}
        for role, flag in ((WORKER, "--workers"), (PS, "--ps"), (EVALUATOR, "--evaluators")):
            if counts[role] < 0:
                self.bad(flag, "a replica count cannot be negative", counts[role], "0 or more")
        pools = []
        for role in ROLES:
            key = FLAG_ROLES[role]
            image = a.image if role == CHIEF else getattr(a, f"{key}_image", None) or a.image
            machine = getattr(a, f"{key}_machine_type", None) or default_machine
            if role != CHIEF:
                # An unset per-role machine falls back to the chief's, as images do.
                machine = getattr(a, f"{key}_machine_type", None) or chief_machine
            accelerator = chief_accelerator
            per_role = getattr(a, f"{key}_accelerator", None)
            if per_role is not None and role != CHIEF:
                accelerator = self.accelerator(f"--{key}-accelerator", per_role)
            pools.append(Pool(role, max(counts[role], 0), image, machine, accelerator))
        if not a.image and not getattr(a, "python_package", None):
            self.bad(
                "--image", "missing", None, "the chief's container image, e.g. gcr.io/p/train:1"
            )
        for role, flag in ((WORKER, "--worker-image"), (PS, "--ps-image"),
                           (EVALUATOR, "--evaluator-image")):  # fmt: skip
            if getattr(a, f"{FLAG_ROLES[role]}_image", None) and not counts[role] > 0:
                self.bad(
                    flag, f"the job has no {role} replicas", getattr(a, f"{role}_image"),
                    f"{COUNT_FLAGS[role]} N with it",
                )  # fmt: skip
        return tuple(pools)

    def accelerator(self, flag: str, text: str | None) -> Accelerator | None:
        if text is None:
            return None
        try:
            return parse_accelerator(text, flag)
        except VtrainError as e:
            self.errors.append(e)
            return None

    def pairs(self, flag: str, items: list[str], *, env: bool) -> tuple[tuple[str, str], ...]:
        found: dict[str, str] = {}
        for item in items or ():
            key, sep, value = item.partition("=")
            if not sep:
                self.bad(flag, "not NAME=VALUE", item, "NAME=VALUE")
                continue
            if env and not _ENV_NAME.fullmatch(key):
                self.bad(flag, "not a variable name", key, "letters, digits and '_'")
            elif env and PLATFORM_OWNED.fullmatch(key):
                self.bad(
                    flag, "the platform sets this variable on every replica", key,
                    "a variable of your own", hint="vtrain reads the platform's value",
                )  # fmt: skip
            elif not env and not (_LABEL_KEY.fullmatch(key) and _LABEL_VALUE.fullmatch(value)):
                self.bad(
                    flag, "not a label", item,
                    "key and value of lowercase letters, digits, '_' or '-' (key starts "
                    "with a letter, each at most 63)",
                )  # fmt: skip
            found[key] = value
        return tuple(found.items())

    def output_dir(self, value: str | None) -> None:
        if value is None:
            return
        if self.platform == "kubeflow":
            if not (value.startswith("gs://") or value.startswith("/")):
                self.bad(
                    "--output-dir", "not a Cloud Storage URI or a path in the pods", value,
                    "gs://BUCKET/PATH or an absolute path on a mounted volume",
                )  # fmt: skip
            elif value.startswith("gs://") and len(value) <= len("gs://"):
                self.bad("--output-dir", "no bucket", value, "gs://BUCKET/PATH")
            return
        if not re.fullmatch(r"gs://[a-z0-9][a-z0-9._-]{1,220}(/.*)?", value):
            self.bad(
                "--output-dir", "not a Cloud Storage URI", value, "gs://BUCKET/PATH",
                hint=f"{self.platform} writes the model and checkpoints to Cloud Storage",
            )  # fmt: skip

    def platform_rules(self, command: tuple[str, ...], env: tuple[tuple[str, str], ...]) -> None:
        a = self.args
        self.only_on(
            "--reduction-servers", getattr(a, "reduction_servers", 0), ("vertex",),
            "only Vertex runs a Reduction Server",
        )  # fmt: skip
        if getattr(a, "reduction_servers", 0) and a.ps:
            self.bad(
                "--reduction-servers", "Vertex's pool 2 holds parameter servers or a Reduction "
                "Server, not both", {"ps": a.ps, "reduction_servers": a.reduction_servers},
                "--ps or --reduction-servers",
            )  # fmt: skip
        if getattr(a, "reduction_servers", 0) < 0:
            self.bad("--reduction-servers", "cannot be negative", a.reduction_servers, "0 or more")
        self.only_on("--study", a.study, ("vertex", "aiplatform"),
                     "Kubeflow tunes through Katib, not the training operator")  # fmt: skip
        self.only_on(
            "--project", a.project, ("vertex", "aiplatform"), "a Kubernetes job has no project"
        )
        self.only_on(
            "--network", a.network, ("vertex", "aiplatform"), "set the network on the cluster"
        )
        self.only_on(
            "--region", a.region, ("vertex", "aiplatform"), "the kubeconfig names the cluster"
        )
        self.only_on(
            "--restart-job-on-worker-restart", a.restart_job_on_worker_restart, ("vertex",),
            "only Vertex restarts a whole job when one replica restarts",
        )  # fmt: skip
        if self.platform == "aiplatform":
            self.only_on("--env", list(env), (), "AI Platform's trainingInput has no environment")
            if getattr(a, "flags_only", False):
                self.flags_only(command)

    def trainjob(self) -> str | None:
        """`--trainjob [RUNTIME]`: the runtime's name; refuse what a TrainJob cannot say."""
        a = self.args
        runtime: str | None = getattr(a, "trainjob", None)
        if runtime is None:
            return None
        if self.platform != "kubeflow":
            self.bad("--trainjob", "a TrainJob is a Kubeflow job", runtime, "kubeflow")
            return None
        if not _NAMES["kubeflow"][0].fullmatch(runtime):
            self.bad("--trainjob", "not a runtime name", runtime, _NAMES["kubeflow"][1])
        if getattr(a, "framework", None):
            self.bad(
                "--framework", "a TrainJob's runtime decides the framework", a.framework,
                "no --framework with --trainjob", hint=f"--trainjob {runtime} names the runtime",
            )  # fmt: skip
        why = "a TrainJob's nodes are all trainers"
        for flag, value in (("--ps", a.ps), ("--evaluators", a.evaluators)):
            if value:
                self.bad(flag, why, value, "0 with --trainjob; --workers N gives numNodes N+1")
        # One trainer template for every node: a per-role setting has nowhere to go.
        for name in ("worker_image", "chief_machine_type", "worker_machine_type",
                     "chief_accelerator", "worker_accelerator"):  # fmt: skip
            value = getattr(a, name, None)
            if value is not None:
                flag = "--" + name.replace("_", "-")
                self.bad(
                    flag, "every node of a TrainJob runs the same trainer", value,
                    f"no {flag} with --trainjob; --{name.split('_', 1)[1].replace('_', '-')} "
                    "sets it for all nodes",
                )  # fmt: skip
        return runtime

    def flags_only(self, command: tuple[str, ...]) -> None:
        """`--flags-only`: the job as gcloud flags, no config.yaml; refuse what needs the file."""
        a = self.args
        why = "gcloud ai-platform jobs submit training has no flag for this; it needs --config"
        for flag, value in (
            ("--evaluators", a.evaluators), ("--evaluator-image", a.evaluator_image),
            ("--evaluator-machine-type", a.evaluator_machine_type),
            ("--evaluator-accelerator", a.evaluator_accelerator), ("--study", a.study),
            ("--timeout", a.timeout), ("--network", a.network),
        ):  # fmt: skip
            if value:
                self.bad(flag, why, value, "no --flags-only, so that vtrain writes config.yaml")
        if command:
            self.bad(
                "COMMAND", "gcloud flags pass arguments to the image's ENTRYPOINT only", command[0],
                "-- --flag ... (arguments only), or no --flags-only",
            )  # fmt: skip

    def study(self) -> Study | None:
        if not self.args.study:
            return None
        from vtrain.tune.study_file import read_study

        try:
            study = read_study(self.args.study)
        except VtrainError as e:
            self.errors.append(e)
            return None
        if self.platform == "aiplatform" and study.measurement_selection == "BEST_MEASUREMENT":
            # Refused, not warned: HyperparameterSpec has no such field and AI Platform ranks
            # trials by finalMetric, so the job would tune a different objective than the file's.
            self.errors.append(
                UsageError(
                    "AI Platform ranks each trial by its final measurement; its "
                    "HyperparameterSpec has no measurement selection",
                    source=self.args.study,
                    path="measurement_selection_type",
                    value=study.measurement_selection,
                    expected="LAST_MEASUREMENT (or no measurement_selection_type) for aiplatform",
                    hint="Vertex honours BEST_MEASUREMENT: vtrain submit vertex --study",
                )  # fmt: skip
            )
        return study

    def python_package(
        self, command: tuple[str, ...]
    ) -> tuple[tuple[str, ...], str | None, str | None]:
        a = self.args
        package = getattr(a, "python_package", None)
        module = getattr(a, "python_module", None)
        executor = getattr(a, "executor_image", None)
        if not (package or module or executor):
            return (), None, None
        if self.platform != "vertex":
            self.bad("--python-package", "only Vertex runs pre-built containers", package, "vertex")
            return (), None, None
        for flag, value in (("--python-package", package), ("--python-module", module),
                            ("--executor-image", executor)):  # fmt: skip
            if not value:
                self.bad(flag, "missing", None, "--python-package, --python-module and "
                         "--executor-image together")  # fmt: skip
        if a.image:
            self.bad("--image", "a pre-built container job runs --executor-image", a.image,
                     "no --image with --python-package")  # fmt: skip
        if command:
            self.bad("COMMAND", "the executor runs `python -m MODULE ARGS`", command[0],
                     "-- --flag ... (the module's arguments only)")  # fmt: skip
        uris: tuple[str, ...] = ()
        if package and package.startswith("gs://"):
            uris = (package,)
        elif package:
            staging = getattr(a, "staging", None)
            if not staging or not staging.startswith("gs://"):
                self.bad("--staging", "a local package must be staged to Cloud Storage", staging,
                         "gs://BUCKET/PATH")  # fmt: skip
            else:
                # The name is known before the build: it is what `staging.stage` uploads.
                from vtrain.submit.staging import planned_uri

                try:
                    uris = (planned_uri(package, staging),)
                except VtrainError as e:
                    self.errors.append(e)
        return uris, module, executor


def unknown_accelerators(options: JobOptions, known: list[str], what: str) -> list[VtrainError]:
    """One error per flag whose accelerator type is not in `known` ("not <what>")."""
    errors: list[VtrainError] = []
    seen: set[str] = set()
    for pool in options.pools:
        a = pool.accelerator
        if pool.count and a is not None and a.type not in known and a.flag not in seen:
            seen.add(a.flag)
            errors.append(
                UsageError(
                    f"not {what}",
                    source=a.flag,
                    value=a.type,
                    expected="one of " + ", ".join(known),
                )
            )
    return errors
