"""What the supervisor knows of each replica as it runs, stops and restarts, and its end.

A slot is one replica across its runs: the current process and output, how often
it restarted, how its last run ended, and the record of every run for the verdict.
"""

from __future__ import annotations

import os
import select
import signal
import time

from vtrain.local import restart_policy as policy
from vtrain.local.keeper import Keeper, KeeperGone
from vtrain.local.process import kill_group
from vtrain.local.result import ReplicaResult
from vtrain.local.runs import end_run

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from vtrain.local.evidence import Run
    from vtrain.local.plan import Replica
    from vtrain.local.process import ReplicaProcess
    from vtrain.local.streams import Stream

KILLED_SECONDS = 10.0
"""How long the end of the job waits for the keeper's word on replicas killed with SIGKILL."""


class Slot:
    """One replica of the job, across its runs."""

    def __init__(self, replica: Replica) -> None:
        self.replica = replica
        self.proc: ReplicaProcess | None = None
        self.stream: Stream | None = None
        self.restarts = 0
        self.first_start: float | None = None
        self.started: float | None = None
        self.end: float | None = None
        self.exit_code: int | None = None
        self.stopped = False
        self.after_success = False
        self.injected = False
        self.frozen = False
        """True while --kill ...:STOP holds its run frozen, as a machine that hangs."""
        self.last_failure: int | None = None
        """The exit code of the previous run, when it failed at once (`restart_policy`)."""
        self.runs: list[Run] = []
        """Every run so far, the current one last (the verdict's evidence)."""

    @property
    def name(self) -> str:
        return self.replica.name

    def begin(self, proc: ReplicaProcess, stream: Stream) -> None:
        """A new run of it has started: `proc`, whose output `stream` reads."""
        self.proc, self.stream = proc, stream
        self.injected = self.stopped = self.frozen = False
        self.exit_code, self.started = None, time.monotonic()
        if self.first_start is None:
            self.first_start = self.started

    def ended(self, code: int | None) -> None:
        """Its run ended with `code` (None: unheard of); what the run did goes on record."""
        self.proc, self.end, self.exit_code = None, time.monotonic(), code
        self.end_run()

    def end_run(self) -> None:
        """Put the current run's end on record (once)."""
        end_run(self.runs, self.exit_code, self.stream, self.injected)

    def terminate(self, *, after_success: bool = False) -> None:
        """SIGTERM it, if it runs: vtrain stops it (`after_success`: the job has succeeded)."""
        if self.proc is None:
            return
        self.stopped = True
        self.after_success |= after_success
        # A machine that hangs takes no SIGTERM: the platform deletes it, and so does vtrain.
        self.proc.signal(signal.SIGKILL if self.frozen else signal.SIGTERM)

    def exit(
        self,
        code: int,
        *,
        job: str,
        job_restarts: int,
        last_kill: tuple[str, float] | None,
        running: tuple[str, ...],
        serving: tuple[str, ...],
        no_lone_restart: str | None,
    ) -> policy.Exit:
        """The facts of its exit with `code`, as the restart policy takes them. `last_kill`:
        the replica --kill killed last, and when."""
        started = self.started
        after = last_kill is not None and started is not None and started <= last_kill[1]
        return policy.Exit(
            self.name,
            code,
            role=self.replica.role,
            injected=self.injected,
            age=None if started is None else time.monotonic() - started,
            restarts=self.restarts,
            job_restarts=job_restarts,
            previous=self.last_failure,
            tail=[] if self.stream is None else self.stream.last_lines(),
            stopped=self.stopped,
            job=job,
            killed=last_kill[0] if after and last_kill is not None else None,
            running=running,
            serving=serving,
            no_lone_restart=no_lone_restart,
        )

    def last_words(self, now: float, silent: float) -> str | None:
        """While it runs: how long it has been silent and running, and its last line."""
        if self.proc is None or self.stream is None or self.started is None:
            return None
        lines = [line for line in self.stream.tail if line.strip()]
        last = lines[-1].decode("utf-8", "replace").strip() if lines else "nothing yet"
        return (
            f"{self.name}: silent for {silent:.0f} s, running for {now - self.started:.0f} s; "
            f"its last line: {last[:200]}"
        )

    def result(self, now: float) -> ReplicaResult:
        """How it ended, for the job's summary."""
        return ReplicaResult(
            name=self.name,
            restarts=self.restarts,
            exit_code=self.exit_code,
            stopped=self.stopped,
            after_success=self.after_success,
            wall_seconds=(self.end or now) - (self.first_start or now),
        )


def results(slots: Iterable[Slot]) -> tuple[ReplicaResult, ...]:
    """How each replica ended, for the job's summary."""
    now = time.monotonic()
    return tuple(slot.result(now) for slot in slots)


def kill_all(keeper: Keeper | None, slots: Iterable[Slot]) -> None:
    """SIGKILL every replica still running, and take its exit status from the keeper."""
    running = {s.proc.pid: s for s in slots if s.proc is not None}
    for slot in running.values():
        slot.stopped = True
    try:
        if keeper is None:
            raise KeeperGone("it did not start")
        for pid in running:
            keeper.signal(pid, signal.SIGKILL)
        end = time.monotonic() + KILLED_SECONDS
        while True:
            for pid, status in keeper.exits():
                if pid in running:
                    ended = running.pop(pid)
                    ended.exit_code = os.waitstatus_to_exitcode(status)
                    ended.proc, ended.end = None, time.monotonic()
            left = end - time.monotonic()
            if not running or left <= 0 or not select.select([keeper], [], [], left)[0]:
                break
            keeper.receive()
    except KeeperGone:
        pass
    # Unheard of: the keeper is gone, or did not answer. Their pids were its children.
    for pid, slot in running.items():
        kill_group(pid, signal.SIGKILL)
        slot.proc, slot.end = None, time.monotonic()
