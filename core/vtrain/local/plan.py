"""The plan of a local job: which replicas, which platform, which faults, what to run.

`Plan.from_options` checks every argument before anything starts and reports all
the bad ones together, each naming the argument, the value and what was expected.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.context import trial_folder
from vtrain.errors import Problems, VtrainError
from vtrain.frozen import Frozen
from vtrain.local.faults import LOCAL_ROLES as LOCAL_ROLES
from vtrain.local.faults import Kill as Kill
from vtrain.local.faults import Slow
from vtrain.local.option_checks import (
    MAX_SECONDS,
    checked_command,
    descriptor_limit,
    seconds_problem,
)
from vtrain.local.replica import LOOPBACK as LOOPBACK
from vtrain.local.replica import Replica as Replica
from vtrain.variables import check_folder_name, check_trial_id

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PLATFORMS = ("vertex", "aiplatform", "kubeflow", "trainjob", "torchrun")
# Vertex and AI Platform restart a failing replica up to five times before the job fails.
DEFAULT_MAX_RESTARTS = 5
DEFAULT_GRACE_SECONDS = 5.0
DEFAULT_QUIET_AFTER = 30.0
"""Seconds of silence from every replica before `vtrain local run` says what each is doing."""

# Descriptors each replica holds while the job runs (its port lock, log file, output pipe and
# process handle), and those the supervisor needs besides, to refuse a job that would run out.
_FDS_PER_REPLICA = 4
_FDS_SPARE = 32
# A rehearsal, not a scheduler: past this many processes one machine rehearses nothing
# faithfully, and a typo (replicaCount: 100000) must not fork a hundred thousand of them.
MAX_LOCAL_REPLICAS = 512


class Plan(Frozen):
    """A checked local job. Build one with `from_options`."""

    __slots__ = (
        "command",
        "output_dir",
        "job_id",
        "platform",
        "workers",
        "ps",
        "evaluators",
        "use_chief",
        "trial_id",
        "max_restarts",
        "restart_job",
        "kills",
        "slows",
        "timeout",
        "grace",
        "quiet_after",
        "job",
        "job_kind",
        "job_sets",
        "role_commands",
        "role_env",
        "shared_disk",
        "output_uri",
    )
    command: tuple[str, ...]
    output_dir: str
    """Absolute; plays the job's `baseOutputDirectory`."""
    job_id: str
    platform: str
    workers: int
    ps: int
    evaluators: int
    use_chief: bool
    trial_id: str | None
    max_restarts: int
    restart_job: bool
    kills: tuple[Kill, ...]
    slows: tuple[Slow, ...]
    timeout: float | None
    grace: float
    quiet_after: float
    """Seconds without a line from any replica before one line per replica says where it is."""
    job: Any
    """The job document `vtrain local run --job` rehearses (its spec), or None: made up."""
    job_kind: str | None
    """That document's kind: CustomJob, HyperparameterTuningJob, TrainingInput, TFJob..."""
    job_sets: tuple[str, ...] | None
    """What its platform sets on a replica, as its kind says (`Kind.sets`); None: all it may."""
    role_commands: Mapping[str, tuple[str, ...]] | None
    """A job's pools may run different commands: role -> command, else `command` for all."""
    role_env: Mapping[str, Mapping[str, str]] | None
    """The variables a job's pools set (their container env), by role."""
    shared_disk: bool
    """True: every replica runs in vtrain's folder with its TMPDIR and HOME (--shared-disk);
    False: each has a disk of its own (`vtrain.local.disks`), as separate machines do."""
    output_uri: str | None
    """A gs:// base output, rehearsed as gs:// (`vtrain.local.bucket`); `output_dir` is local."""

    def __init__(
        self,
        command: tuple[str, ...],
        output_dir: str,
        job_id: str,
        platform: str = "vertex",
        workers: int = 0,
        ps: int = 0,
        evaluators: int = 0,
        use_chief: bool = False,
        trial_id: str | None = None,
        max_restarts: int = DEFAULT_MAX_RESTARTS,
        restart_job: bool = False,
        kills: tuple[Kill, ...] = (),
        slows: tuple[Slow, ...] = (),
        timeout: float | None = None,
        grace: float = DEFAULT_GRACE_SECONDS,
        quiet_after: float = DEFAULT_QUIET_AFTER,
        job: Any = None,
        job_kind: str | None = None,
        job_sets: tuple[str, ...] | None = None,
        role_commands: Mapping[str, tuple[str, ...]] | None = None,
        role_env: Mapping[str, Mapping[str, str]] | None = None,
        shared_disk: bool = False,
        output_uri: str | None = None,
    ) -> None:
        self._init_from(locals())

    @classmethod
    def from_options(
        cls,
        command: Sequence[str],
        *,
        platform: str = "vertex",
        workers: int = 0,
        ps: int = 0,
        evaluators: int = 0,
        use_chief: bool = False,
        output_dir: str | None = None,
        job_id: str | None = None,
        trial_id: str | None = None,
        max_restarts: int = DEFAULT_MAX_RESTARTS,
        restart_job: bool = False,
        kills: Iterable[str | Kill] = (),
        slows: Iterable[str | Slow] = (),
        timeout: float | None = None,
        grace: float = DEFAULT_GRACE_SECONDS,
        quiet_after: float = DEFAULT_QUIET_AFTER,
        job: Any = None,
        job_kind: str | None = None,
        job_sets: tuple[str, ...] | None = None,
        role_commands: Mapping[str, Sequence[str]] | None = None,
        role_env: Mapping[str, Mapping[str, str]] | None = None,
        sources: Mapping[str, str] | None = None,
        shared_disk: bool = False,
    ) -> Plan:
        """Check every option and build the plan; all problems are raised together.

        `sources` says where a rehearsed job's values came from (role -> its document's
        replica count field), so that a refusal names that field, not a flag never typed.
        """
        problems = Problems()
        bad = problems.bad
        given = {WORKER: "--workers", PS: "--ps", EVALUATOR: "--evaluators"} | dict(sources or {})

        if platform not in PLATFORMS:
            bad("--platform", "unknown platform", platform, " or ".join(PLATFORMS))
        counts = {WORKER: workers, PS: ps, EVALUATOR: evaluators}
        for role, count in counts.items():
            if count < 0:
                bad(given[role], "a replica count cannot be negative", count, "0 or more")
        fds = descriptor_limit()
        by_fds = (fds - _FDS_SPARE) // _FDS_PER_REPLICA
        if workers + ps + evaluators + 1 > min(by_fds, MAX_LOCAL_REPLICAS):
            many = [role for role, count in counts.items() if count > 0]
            why = (
                f"{_FDS_PER_REPLICA} file descriptors each, `ulimit -n` is {fds}"
                if by_fds < MAX_LOCAL_REPLICAS
                else "a local rehearsal runs a replica per process"
            )
            bad(
                "/".join(given[role] for role in many) or "--workers/--ps/--evaluators",
                "too many replicas to rehearse on this machine",
                {role: counts[role] for role in many},
                f"at most {min(by_fds, MAX_LOCAL_REPLICAS)} replicas in all, the chief "
                f"included ({why})",
            )
        if max_restarts < 0:
            bad("--max-restarts", "cannot be negative", max_restarts, "0 or more")
        if timeout is not None and (problem := seconds_problem(timeout, zero=False)):
            bad("--timeout", problem, timeout, f"seconds > 0, at most {MAX_SECONDS:.0f}")
        if problem := seconds_problem(grace, zero=True):
            bad("--grace", problem, grace, f"seconds >= 0, at most {MAX_SECONDS:.0f}")
        if problem := seconds_problem(quiet_after, zero=False):
            bad("--quiet-after", problem, quiet_after, f"seconds > 0, at most {MAX_SECONDS:.0f}")
        if platform == "torchrun" and (ps or evaluators):
            bad(
                "--ps/--evaluators",
                "torchrun starts trainers only",
                {"ps": ps, "evaluators": evaluators},
                "0 with --platform torchrun",
            )
        if use_chief and platform != "aiplatform":
            bad("--use-chief", "only AI Platform names its chief master", platform, "aiplatform")
        if trial_id is not None and platform in ("kubeflow", "trainjob", "torchrun"):
            bad("--trial", "this platform has no trial id", platform, "vertex or aiplatform")
        if trial_id is not None:
            try:
                trial_id = check_trial_id(trial_id, "--trial")
            except VtrainError as e:
                bad("--trial", e.problem, trial_id, e.expected)
        if job_id is None:
            job_id = time.strftime("local-%Y%m%d-%H%M%S-") + str(os.getpid())
        else:
            try:
                check_folder_name(job_id, "--job-id", "job id", "e.g. my-job-1")
            except VtrainError as e:
                bad("--job-id", e.problem, job_id, e.expected or "")

        command = checked_command(problems, command, role_commands, role_env)

        checked: list[Kill] = []
        slowed: list[Slow] = []
        for given_faults, kind, flag in ((kills, Kill, "--kill"), (slows, Slow, "--slow")):
            found: list[Kill | Slow] = []
            for fault in given_faults:
                try:
                    found.append(fault if isinstance(fault, kind) else kind.parse(str(fault)))
                except VtrainError as e:
                    problems.add(e)
            counts = {CHIEF: 1, WORKER: workers, PS: ps, EVALUATOR: evaluators}
            for fault in found:
                if fault.index >= counts[fault.role]:
                    bad(
                        flag,
                        "no such replica",
                        str(fault),
                        f"a {fault.role} index below {max(counts[fault.role], 0)} "
                        f"(the job has {max(counts[fault.role], 0)} {fault.role} replicas)",
                    )
            (checked if kind is Kill else slowed).extend(found)  # type: ignore[arg-type]

        # gs:// (--output-dir, a Vertex document's baseOutputDirectory) is served by an emulator.
        doc = ((job or {}).get("baseOutputDirectory") or {}).get("outputUriPrefix") or ""
        uri = next((u for u in (output_dir or "", doc) if u.startswith("gs://")), None)
        if uri:
            from vtrain.local.bucket import check_output_uri

            check_output_uri(problems, uri, platform, "--output-dir")
        default = os.path.join("vtrain-output", "local", job_id)
        base = os.path.abspath(default if output_dir is None or output_dir == uri else output_dir)
        if "\0" in base:
            bad("--output-dir", "a NUL character (\\0) in a path", output_dir, "a path without NUL")
        elif os.path.exists(base) and not os.path.isdir(base):
            bad("--output-dir", "exists and is not a folder", output_dir, "a folder or a new path")
        problems.raise_all()

        return cls(
            command=tuple(command),
            output_dir=base,
            job_id=job_id,
            platform=platform,
            workers=workers,
            ps=ps,
            evaluators=evaluators,
            use_chief=use_chief,
            trial_id=trial_id,
            max_restarts=max_restarts,
            # torchrun restarts all its workers together when one fails, and a TrainJob's
            # JobSet all its nodes (its failurePolicy); so do their rehearsals.
            restart_job=restart_job or platform in ("torchrun", "trainjob"),
            kills=tuple(sorted(checked, key=lambda k: k.seconds)),
            slows=tuple(sorted(slowed, key=lambda k: k.seconds)),
            timeout=timeout,
            grace=grace,
            quiet_after=quiet_after,
            job=job,
            job_kind=job_kind,
            job_sets=job_sets,
            role_commands=(
                {role: tuple(c) for role, c in role_commands.items()} if role_commands else None
            ),
            role_env=role_env,
            shared_disk=shared_disk,
            output_uri=uri,
        )

    def command_of(self, role: str) -> tuple[str, ...]:
        """What a replica of `role` runs: its pool's command in a rehearsed job, else `command`
        and what its platform passes after it."""
        if self.role_commands and self.role_commands.get(role):
            return self.role_commands[role]
        if self.platform == "aiplatform" and self.job is None:
            # AI Platform passes the jobDir it made up (--output-dir); a config.yaml's has its own.
            return (*self.command, f"--job-dir={self.output_dir}")
        return self.command

    @property
    def counts(self) -> dict[str, int]:
        """Replicas per role, chief first."""
        return {CHIEF: 1, WORKER: self.workers, PS: self.ps, EVALUATOR: self.evaluators}

    @property
    def size(self) -> int:
        """How many replicas the job has."""
        return sum(self.counts.values())

    @property
    def trial_dir(self) -> str:
        """The output folder of this trial: ``<output>/<trial>`` under tuning, else ``<output>``."""
        return trial_folder(self.output_dir, self.trial_id)

    def replicas(self, ports: Sequence[int] = (), hosts: Sequence[str] = ()) -> tuple[Replica, ...]:
        """Every replica in rank order (chief, workers, ps, evaluators), on `ports` and `hosts`
        in order (127.0.0.1 without hosts)."""
        roles = [(role, i) for role, n in self.counts.items() for i in range(n)]
        if ports and len(ports) != len(roles):
            raise ValueError(f"{len(ports)} ports for {len(roles)} replicas")
        if hosts and len(hosts) != len(roles):
            raise ValueError(f"{len(hosts)} hosts for {len(roles)} replicas")
        return tuple(
            Replica(role, i, ports[n] if ports else 0, hosts[n] if hosts else LOOPBACK)
            for n, (role, i) in enumerate(roles)
        )
