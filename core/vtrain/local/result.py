"""How a local job ended, replica by replica, and the summary table printed at its end."""

from __future__ import annotations

import signal

from vtrain.frozen import Frozen

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from vtrain.local.verdict import Verdict

SUCCEEDED = "succeeded"
FAILED = "failed"
TIMED_OUT = "timed out"
INTERRUPTED = "interrupted"
EXIT_TIMEOUT = 124  # as timeout(1) says it


def describe_exit(code: int | None) -> str:
    """An exit status as a person reads it: ``0``, ``3``, ``SIGKILL``; ``-`` when still unknown."""
    if code is None:
        return "-"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return str(code)


def shell_status(code: int) -> int:
    """The status a shell would report for `code` (a signal -N becomes 128+N)."""
    return 128 - code if code < 0 else code


class ReplicaResult(Frozen):
    """One replica at the end of the job."""

    __slots__ = ("name", "restarts", "exit_code", "stopped", "wall_seconds", "after_success")
    name: str
    restarts: int
    exit_code: int | None
    """The last run's exit code; negative for a signal, as in `subprocess`."""
    stopped: bool
    """True when vtrain stopped it at the end of the job (it did not exit on its own)."""
    wall_seconds: float
    after_success: bool
    """True when it was stopped because the chief had succeeded: the job's end, no failure."""

    def __init__(
        self,
        name: str,
        restarts: int,
        exit_code: int | None,
        stopped: bool,
        wall_seconds: float,
        after_success: bool = False,
    ) -> None:
        self._init_from(locals())

    @property
    def status(self) -> str:
        """The exit status column: ``0``, ``1``, ``SIGTERM (stopped)``..."""
        text = describe_exit(self.exit_code)
        if self.stopped and self.after_success:
            return f"{text} (stopped after the chief's success)"
        return f"{text} (stopped)" if self.stopped else text


class JobResult(Frozen):
    """The job's outcome, its exit status and each replica's."""

    __slots__ = ("outcome", "status", "replicas", "reason", "verdict")
    outcome: str
    status: int
    replicas: tuple[ReplicaResult, ...]
    reason: str
    verdict: Verdict | None
    """The rehearsal's verdict (`vtrain.local.checks`), once judged."""

    def __init__(
        self,
        outcome: str,
        status: int,
        replicas: tuple[ReplicaResult, ...],
        reason: str = "",
        verdict: Verdict | None = None,
    ) -> None:
        self._init_from(locals())

    def with_verdict(self, verdict: Verdict) -> JobResult:
        """This result, with the rehearsal's verdict."""
        return JobResult(self.outcome, self.status, self.replicas, self.reason, verdict)

    def table(self) -> str:
        """The summary table: replica, restarts, exit status, wall time."""
        head = ("replica", "restarts", "exit status", "wall time")
        rows = [
            (r.name, str(r.restarts), r.status, f"{r.wall_seconds:.1f} s") for r in self.replicas
        ]
        widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]

        def fmt(row: tuple[str, ...]) -> str:
            return "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()

        lines = [fmt(head), fmt(tuple("-" * w for w in widths)), *map(fmt, rows)]
        tail = f"job {self.outcome} (exit status {self.status})"
        if self.reason:
            tail += f": {self.reason}"
        return "\n".join([*lines, tail]) + "\n"
