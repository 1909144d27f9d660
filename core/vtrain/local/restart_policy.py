"""The platform's rules for a replica's exit, as a pure function: the facts in, an action out.

The job succeeds when the chief exits 0: the replicas that train get a moment to
finish by themselves, those that serve (which never would) are stopped at once.
A failing or killed replica restarts, alone or with the whole job, up to
--max-restarts times. Three local touches end the job instead, where a restart
would only repeat the failure or hang: a script that refused its arguments (a
usage error), a command that fails at once the same way twice, and a replica
that cannot rejoin its job alone (what its plugin says, as MXNet's ps-lite does).
The supervisor gathers the facts of each exit, asks `decide`, and acts.
"""

from __future__ import annotations

import signal

from vtrain.cluster.roles import CHIEF
from vtrain.frozen import Frozen
from vtrain.local.result import describe_exit, shell_status
from vtrain.local.usage_error import refused_arguments
from vtrain.progress.bound import STUCK_EXIT, stuck_said

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# Workers finishing the same last step as the chief end a moment after it; stopping them
# at once would show a successful job's workers as SIGTERMed. The grace ends as soon as
# they have all exited; replicas that serve do not get it.
SUCCESS_GRACE_SECONDS = 1.0
# A run that fails this soon after its start failed before training began (no such file,
# an import error): when the next run fails the same way, restarts would only repeat it.
IMMEDIATE_SECONDS = 1.0

HUNG_PEER = (
    "; where a peer hangs, a replica restarted alone finds it hung again: "
    "--restart-job-on-worker-restart (scheduling.restartJobOnWorkerRestart on Vertex) "
    "restarts every replica together, the hung one too"
)
"""Said when a stuck replica restarts alone: no platform restarts a machine that hangs."""

RUNNING, STOPPING, SUCCEEDED = "running", "stopping", "succeeded"
"""The job's state when a replica exits: running, being stopped, or the chief has succeeded."""

NOTE = "note"
"""Say what happened; nothing else changes."""
RESTART_REPLICA = "restart the replica"
RESTART_JOB = "restart the job"
STOP = "stop"
"""Stop every replica; the job fails with the decision's status and reason."""
SUCCEED = "succeed"
"""The chief succeeded: stop those that serve now, the others after the grace."""


class Rules(Frozen):
    """What the job's plan says of restarts."""

    __slots__ = ("max_restarts", "restart_job")
    max_restarts: int
    restart_job: bool
    """True: a failure restarts every replica (--restart-job-on-worker-restart, torchrun)."""

    def __init__(self, max_restarts: int, restart_job: bool = False) -> None:
        self._init_from(locals())


class Exit(Frozen):
    """The facts of one replica's exit."""

    __slots__ = (
        "replica",
        "role",
        "code",
        "injected",
        "age",
        "restarts",
        "job_restarts",
        "previous",
        "tail",
        "stopped",
        "job",
        "killed",
        "running",
        "serving",
        "no_lone_restart",
    )
    replica: str
    role: str
    code: int
    """Its exit code; negative for a signal, as in `subprocess`."""
    injected: bool
    """True when --kill killed it (its machine was lost, as a VM restart would be)."""
    age: float | None
    """Seconds from this run's start to its exit."""
    restarts: int
    """This replica's restarts so far."""
    job_restarts: int
    """The whole job's restarts so far."""
    previous: int | None
    """The exit code of its previous run, when that run failed at once."""
    tail: Sequence[bytes]
    """The last lines this run printed."""
    stopped: bool
    """True when vtrain stopped it."""
    job: str
    """RUNNING, STOPPING or SUCCEEDED."""
    killed: str | None
    """The replica --kill killed since this run started, if any."""
    running: tuple[str, ...]
    """The other replicas still running."""
    serving: tuple[str, ...]
    """Those of `running` that serve (a parameter server): they never exit by themselves."""
    no_lone_restart: str | None
    """Why a replica restarted alone cannot rejoin this job, as its plugin says; or None."""

    def __init__(
        self,
        replica: str,
        code: int,
        *,
        role: str = "worker",
        injected: bool = False,
        age: float | None = None,
        restarts: int = 0,
        job_restarts: int = 0,
        previous: int | None = None,
        tail: Sequence[bytes] = (),
        stopped: bool = False,
        job: str = RUNNING,
        killed: str | None = None,
        running: tuple[str, ...] = (),
        serving: tuple[str, ...] = (),
        no_lone_restart: str | None = None,
    ) -> None:
        self._init_from(locals())


class Decision(Frozen):
    """What the supervisor does about an exit, and the notes it writes, in order."""

    __slots__ = ("action", "notes", "status", "reason", "failed_at_once", "stop_now", "grace")
    action: str
    notes: tuple[tuple[str, str | None], ...]
    """(text, the replica whose log also gets it, or None)."""
    status: int
    """STOP: the job's exit status."""
    reason: str
    """STOP and SUCCEED: why the job ends, for its result."""
    failed_at_once: int | None
    """The exit code to remember as this run's immediate failure (the next `previous`)."""
    stop_now: tuple[str, ...]
    """SUCCEED: the replicas to stop at once (those that serve)."""
    grace: float | None
    """SUCCEED: seconds the others have to exit by themselves; None: nothing else runs."""

    def __init__(
        self,
        action: str,
        notes: tuple[tuple[str, str | None], ...] = (),
        *,
        status: int = 0,
        reason: str = "",
        failed_at_once: int | None = None,
        stop_now: tuple[str, ...] = (),
        grace: float | None = None,
    ) -> None:
        self._init_from(locals())

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._fields().items())
        return f"Decision({shown})"


def decide(exit: Exit, rules: Rules) -> Decision:
    """What the platform does when a replica exits, and what vtrain says of it."""
    name, code = exit.replica, exit.code
    how = describe_exit(code)
    preempted = preemption(code, exit.tail)
    if exit.job == STOPPING:
        # A replica that committed its preemption save before the stop says so: under the
        # whole-job policy the peers are stopped as soon as the first one leaves.
        return Decision(NOTE, ((f"{name} {preempted or f'stopped ({how})'}", name),))
    if exit.job == SUCCEEDED:  # nothing restarts
        said = (
            f"stopped ({how})" if exit.stopped else f"exited with {how} after the chief's success"
        )
        return Decision(NOTE, ((f"{name} {said}", name),))
    if not exit.injected and code == 0:
        if exit.role == CHIEF:
            return _succeed(exit)
        return Decision(NOTE, ((f"{name} finished", name),))
    # A failure, or a replica whose "machine" was killed: the platform restarts it.
    stuck = None if exit.injected else stuck_said(code, exit.tail)
    why = (
        preempted
        or (stuck and f"was stuck ({stuck})" + _exit_75(code))
        or ("was killed (--kill)" if exit.injected else f"exited with {how}")
    )
    if not exit.injected and exit.killed is not None:
        why += f", as expected after {exit.killed}'s kill"
    status = max(1, shell_status(code))
    refused = None if exit.injected else refused_arguments(code, exit.tail)
    if refused is not None:
        # The script's line comes last, in no brackets: it may end in a hidden value, and a
        # note is redacted again as it is shown, where a value runs to the next blank.
        reason = f"{name}'s script refused its arguments: {refused}"
        note = (
            f"{name}'s script refused its arguments; not restarting it, as a restart passes "
            f"the same arguments: {refused}"
        )
        return Decision(STOP, ((note, name),), status=shell_status(code), reason=reason)
    at_once = not exit.injected and exit.age is not None and exit.age < IMMEDIATE_SECONDS
    if at_once and exit.previous == code:
        reason = (
            f"{name} exited with {how} within {IMMEDIATE_SECONDS:g} s of its start, "
            "as its previous run did"
        )
        note = (
            reason + "; not restarting it: the command fails before it runs "
            "(see its output above: a missing file, a bad argument, an import error?)"
        )
        return Decision(STOP, ((note, name),), status=status, reason=reason)
    failed_at_once = code if at_once else None
    used = exit.job_restarts if rules.restart_job else exit.restarts
    if used >= rules.max_restarts:
        reason = f"{name} {why} after {used} restarts (--max-restarts {rules.max_restarts})"
        if stuck and not rules.restart_job:
            reason += HUNG_PEER
        return Decision(
            STOP,
            ((reason + "; the job fails", name),),
            status=status,
            reason=reason,
            failed_at_once=failed_at_once,
        )
    if rules.restart_job:
        note = f"{name} {why}; restarting every replica"
        return Decision(RESTART_JOB, ((note, name),), failed_at_once=failed_at_once)
    if exit.no_lone_restart is not None:
        # What the platform would do (restart it alone) would hang: say so, and end.
        reason = (
            f"{name} {why}: {exit.no_lone_restart}, so restart the whole job "
            "(--restart-job-on-worker-restart here, scheduling.restartJobOnWorkerRestart "
            "on Vertex)"
        )
        return Decision(
            STOP, ((reason, name),), status=status, reason=reason, failed_at_once=failed_at_once
        )
    note = f"{name} {why}; restart {exit.restarts + 1} of {rules.max_restarts}"
    if stuck:
        note += HUNG_PEER
    return Decision(RESTART_REPLICA, ((note, name),), failed_at_once=failed_at_once)


def _exit_75(code: int) -> str:
    return f": its watchdog ended it (exit {STUCK_EXIT})" if code == STUCK_EXIT else ""


def _succeed(exit: Exit) -> Decision:
    """The chief exited 0: the job has succeeded; the others end by themselves, or are stopped."""
    name = exit.replica
    reason = f"{name} exited 0"
    if not exit.running:
        return Decision(SUCCEED, ((f"{name} finished", name),), reason=reason)
    training = [r for r in exit.running if r not in exit.serving]
    notes: list[tuple[str, str | None]] = []
    if training:
        notes.append(
            (
                f"{name} finished; the other replicas ({', '.join(training)}) have "
                f"{SUCCESS_GRACE_SECONDS:g} s to exit before they are stopped",
                name,
            )
        )
    else:
        notes.append((f"{name} finished", name))
    if exit.serving:
        notes.append(
            (
                f"stopping {', '.join(exit.serving)} at once after the chief's success "
                "(replicas that serve never exit by themselves)",
                None,
            )
        )
    return Decision(
        SUCCEED, tuple(notes), reason=reason, stop_now=exit.serving, grace=SUCCESS_GRACE_SECONDS
    )


def preemption(code: int, tail: Sequence[bytes]) -> str | None:
    """`preempted (SIGTERM): committed step N` when a replica ended so after saying it.

    Ended so: it exited 143, or a SIGTERM ended it on its way out after the commit
    (vtrain's own stop of the job, once the framework gave the default handler back).
    """
    if code not in (128 + signal.SIGTERM, -signal.SIGTERM):
        return None
    from vtrain.preemption import committed_step  # only here: it loads `typing`

    step = committed_step(list(tail))
    return None if step is None else f"preempted (SIGTERM): committed step {step}"
