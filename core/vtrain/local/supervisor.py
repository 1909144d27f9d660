"""Starting, watching, restarting, killing and stopping the replicas of a local job.

One thread and one selector: it wakes on a replica's output, on a replica's
exit (a pidfd), on a signal to vtrain (a self-pipe) and at the next deadline
(an injected kill, the job's timeout, the end of a grace period). The platform's
rules live here: the job succeeds when the chief exits 0, a failing or killed
replica restarts up to --max-restarts times, and stopping is SIGTERM, then
SIGKILL after the grace period. Two local touches: after the chief's success the
others get a moment to finish by themselves, and a replica whose command fails
at once, the same way twice, is not restarted again.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from vtrain.cluster.roles import CHIEF
from vtrain.context import output_dirs
from vtrain.errors import LaunchError
from vtrain.local.environment import metric_file, replica_env
from vtrain.local.output import Output
from vtrain.local.plan import Kill, Plan, Replica
from vtrain.local.ports import reserve_ports
from vtrain.local.process import ReplicaProcess
from vtrain.local.result import (
    EXIT_TIMEOUT,
    FAILED,
    INTERRUPTED,
    SUCCEEDED,
    TIMED_OUT,
    JobResult,
    ReplicaResult,
    describe_exit,
    shell_status,
)
from vtrain.os_hints import OUT_OF_DESCRIPTORS, hint_for

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

# Without pidfds (not Linux) exits are found by polling this often.
_POLL_SECONDS = 0.05
_DRAIN_SECONDS = 1.0
_CHUNK = 65536
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Workers finishing the same last step as the chief end a moment after it; stopping them
# at once would show a successful job's workers as SIGTERMed.
SUCCESS_GRACE_SECONDS = 1.0
# A run that fails this soon after its start failed before training began (no such file,
# an import error): when the next run fails the same way, restarts would only repeat it.
IMMEDIATE_SECONDS = 1.0


def run_job(
    plan: Plan,
    *,
    stream: TextIO | None = None,
    colour: bool | None = None,
    environ: Mapping[str, str] | None = None,
) -> JobResult:
    """Run every replica of `plan` to the job's end, as its platform would; leave no process."""
    with reserve_ports(plan.size) as ports:
        replicas = plan.replicas(ports)
        try:
            metric_folder = os.path.dirname(metric_file(plan, replicas[0]))
            for folder in (*output_dirs(plan.output_dir, plan.trial_id).values(), metric_folder):
                os.makedirs(folder, exist_ok=True)
            # Per trial: the parallel trials of a study share one --output-dir.
            output = Output(
                [r.name for r in replicas], plan.trial_dir, stream or sys.stdout, colour=colour
            )
        except OSError as e:
            if e.errno in OUT_OF_DESCRIPTORS:  # the limit, not the folder: say so
                raise LaunchError(
                    f"cannot open the job's logs ({e.strerror})",
                    value=f"{plan.size} replicas",
                    hint=hint_for(e),
                ) from None
            raise LaunchError(
                f"cannot write the job's folders ({e.strerror or e})",
                source="--output-dir",
                value=plan.output_dir,
                expected="a folder this user can create and write",
                hint=hint_for(e),
            ) from None
        try:
            where = ", ".join(f"{r.name} {r.address}" for r in replicas)
            output.note(f"job {plan.job_id} ({plan.platform}) in {plan.output_dir}: {where}")
            result = _Supervisor(plan, replicas, output, environ).run()
            output.write(result.table())
        finally:
            output.close()
    return result


class _Stream:
    """The read end of one run's stdout and stderr, and its unfinished last line."""

    def __init__(self, fd: int, name: str) -> None:
        self.fd = fd
        self.name = name
        self.pending = b""


class _Slot:
    """What the supervisor knows about one replica as it runs, stops and restarts."""

    def __init__(self, replica: Replica) -> None:
        self.replica = replica
        self.proc: ReplicaProcess | None = None
        self.stream: _Stream | None = None
        self.restarts = 0
        self.first_start: float | None = None
        self.end: float | None = None
        self.exit_code: int | None = None
        self.stopped = False
        self.after_success = False
        self.injected = False
        self.started: float | None = None
        self.last_failure: int | None = None
        """The exit code of the previous run, when it failed within IMMEDIATE_SECONDS."""
        self.term_deadline: float | None = None

    @property
    def name(self) -> str:
        return self.replica.name


class _Supervisor:
    def __init__(
        self,
        plan: Plan,
        replicas: Sequence[Replica],
        output: Output,
        environ: Mapping[str, str] | None,
    ) -> None:
        self._plan = plan
        self._replicas = tuple(replicas)
        self._out = output
        self._environ = os.environ if environ is None else environ
        self._slots = {r.name: _Slot(r) for r in replicas}
        self._sel = selectors.DefaultSelector()
        self._streams: set[_Stream] = set()
        self._pending_kills: list[Kill] = list(plan.kills)
        self._signals: list[int] = []
        self._interrupted = False
        self._stopping = False
        self._then_restart = False
        self._stop_deadline: float | None = None
        self._success_deadline: float | None = None
        self._outcome: tuple[str, int, str] | None = None
        self._job_restarts = 0
        self._last_kill: tuple[str, float] | None = None
        """The replica --kill killed last, and when."""
        self._finished = False
        self._poll = False  # set when a replica has no pidfd
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._t0 = time.monotonic()

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> JobResult:
        restore = self._catch_signals()
        try:
            self._t0 = time.monotonic()
            for slot in self._slots.values():
                self._start(slot)
            while not self._finished:
                self._step()
        finally:
            # Also after an error of our own: nothing we started may outlive the job.
            self._kill_all()
            self._drain()
            restore()
            self._sel.close()
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._out.flush()
        return self._result()

    def _step(self) -> None:
        timeout = self._next_deadline(time.monotonic())
        if self._poll:
            timeout = _POLL_SECONDS if timeout is None else min(timeout, _POLL_SECONDS)
        for key, _ in self._sel.select(timeout):
            if key.data == "wake":
                self._on_wake()
            elif isinstance(key.data, _Stream):
                self._read(key.data)
            elif isinstance(key.data, _Slot):
                self._check_exit(key.data)
        if self._poll:
            for slot in list(self._slots.values()):
                self._check_exit(slot)
        self._on_deadlines(time.monotonic())
        self._advance()
        self._out.flush()

    def _next_deadline(self, now: float) -> float | None:
        times = [s.term_deadline for s in self._slots.values() if s.term_deadline is not None]
        if self._pending_kills:
            times.append(self._t0 + self._pending_kills[0].seconds)
        if self._plan.timeout is not None and self._outcome is None:
            times.append(self._t0 + self._plan.timeout)
        for deadline in (self._stop_deadline, self._success_deadline):
            if deadline is not None:
                times.append(deadline)
        return max(0.0, min(times) - now) if times else None

    # -- starting and reading ------------------------------------------------------------

    def _start(self, slot: _Slot) -> None:
        env = replica_env(
            self._plan, self._replicas, slot.replica, restarts=slot.restarts, environ=self._environ
        )
        proc = ReplicaProcess.start(slot.name, self._plan.command_of(slot.replica.role), env)
        stream = _Stream(proc.output, slot.name)
        self._streams.add(stream)
        self._sel.register(proc.output, selectors.EVENT_READ, stream)
        if proc.pidfd is not None:
            self._sel.register(proc.pidfd, selectors.EVENT_READ, slot)
        else:
            self._poll = True
        slot.proc, slot.stream, slot.injected, slot.stopped = proc, stream, False, False
        slot.exit_code, slot.started = None, time.monotonic()
        if slot.first_start is None:
            slot.first_start = time.monotonic()

    def _read(self, stream: _Stream) -> bool:
        """Read one chunk; False once nothing more is there now (or ever)."""
        if stream not in self._streams:  # closed earlier in this batch of events
            return False
        try:
            chunk = os.read(stream.fd, _CHUNK)
        except BlockingIOError:
            return False
        if not chunk:
            self._close_stream(stream)
            return False
        *lines, stream.pending = (stream.pending + chunk).split(b"\n")
        for line in lines:
            self._out.line(stream.name, line)
        if len(stream.pending) > _CHUNK:  # a replica that never ends its line is still shown
            self._out.line(stream.name, stream.pending)
            stream.pending = b""
        return True

    def _close_stream(self, stream: _Stream) -> None:
        if stream.pending:
            self._out.line(stream.name, stream.pending)
            stream.pending = b""
        self._sel.unregister(stream.fd)
        os.close(stream.fd)
        self._streams.discard(stream)

    def _drain(self) -> None:
        # Everything is dead: the pipes end at once, unless a process escaped its group.
        end = time.monotonic() + _DRAIN_SECONDS
        while self._streams and (left := end - time.monotonic()) > 0:
            for key, _ in self._sel.select(left):
                if isinstance(key.data, _Stream):
                    while self._read(key.data):
                        pass
        for stream in list(self._streams):
            self._close_stream(stream)

    # -- exits ---------------------------------------------------------------------------

    def _check_exit(self, slot: _Slot) -> None:
        proc = slot.proc
        if proc is None or not proc.has_exited():
            return
        if proc.pidfd is not None:
            self._sel.unregister(proc.pidfd)
        code = proc.reap()
        if slot.stream is not None:
            while self._read(slot.stream):
                pass
        slot.proc, slot.end, slot.exit_code, slot.term_deadline = None, time.monotonic(), code, None
        self._on_exit(slot, code)

    def _on_exit(self, slot: _Slot, code: int) -> None:
        how = describe_exit(code)
        if self._stopping:
            self._out.note(f"{slot.name} stopped ({how})", slot.name)
            return
        if self._success_deadline is not None:  # the job has succeeded: nothing restarts
            self._out.note(f"{slot.name} exited with {how} after the chief's success", slot.name)
            return
        plan = self._plan
        if not slot.injected and code == 0:
            if slot.replica.role == CHIEF:
                self._on_chief_success(slot)
            else:
                self._out.note(f"{slot.name} finished", slot.name)
            return
        # A failure, or a replica whose "machine" was killed: the platform restarts it.
        why = "was killed (--kill)" if slot.injected else f"exited with {how}"
        killed = self._last_kill
        if not slot.injected and killed and slot.started and slot.started <= killed[1]:
            why += f", as expected after {killed[0]}'s kill"
        used = self._job_restarts if plan.restart_job else slot.restarts
        immediate = (
            not slot.injected
            and slot.started is not None
            and time.monotonic() - slot.started < IMMEDIATE_SECONDS
        )
        if immediate and slot.last_failure == code:
            reason = (
                f"{slot.name} exited with {how} within {IMMEDIATE_SECONDS:g} s of its start, "
                "as its previous run did"
            )
            self._out.note(
                reason + "; not restarting it: the command fails before it runs "
                "(see its output above: a missing file, a bad argument, an import error?)",
                slot.name,
            )
            self._stop(FAILED, max(1, shell_status(code)), reason)
            return
        slot.last_failure = code if immediate else None
        if used >= plan.max_restarts:
            reason = f"{slot.name} {why} after {used} restarts (--max-restarts {plan.max_restarts})"
            self._out.note(reason + "; the job fails", slot.name)
            self._stop(FAILED, max(1, shell_status(code)), reason)
        elif plan.restart_job:
            self._out.note(f"{slot.name} {why}; restarting every replica", slot.name)
            self._stop(None, 0, "", then_restart=True)
        else:
            slot.restarts += 1
            self._out.note(
                f"{slot.name} {why}; restart {slot.restarts} of {plan.max_restarts}", slot.name
            )
            self._start(slot)

    def _on_chief_success(self, slot: _Slot) -> None:
        self._outcome = (SUCCEEDED, 0, f"{slot.name} exited 0")
        if not any(s.proc is not None for s in self._slots.values()):
            self._out.note(f"{slot.name} finished", slot.name)
            self._finished = True
            return
        self._out.note(
            f"{slot.name} finished; the other replicas have {SUCCESS_GRACE_SECONDS:g} s "
            "to exit before they are stopped",
            slot.name,
        )
        self._success_deadline = time.monotonic() + SUCCESS_GRACE_SECONDS

    def _stop_after_success(self) -> None:
        self._success_deadline = None
        running = [s for s in self._slots.values() if s.proc is not None]
        if running:
            names = ", ".join(s.name for s in running)
            self._out.note(f"stopping {names} after the chief's success")
        for slot in running:
            slot.after_success = True
        assert self._outcome is not None
        self._stop(*self._outcome)

    # -- stopping ------------------------------------------------------------------------

    def _stop(
        self, outcome: str | None, status: int, reason: str, *, then_restart: bool = False
    ) -> None:
        """Stop every replica (SIGTERM, SIGKILL after the grace period); then end or restart."""
        if outcome is not None:
            self._outcome = (outcome, status, reason)
        self._then_restart = then_restart and self._outcome is None
        if self._stopping:
            return
        self._stopping = True
        for slot in self._slots.values():
            if slot.proc is not None:
                slot.stopped = True
                slot.proc.signal(signal.SIGTERM)
        self._stop_deadline = time.monotonic() + self._plan.grace

    def _advance(self) -> None:
        running = any(s.proc is not None for s in self._slots.values())
        if self._success_deadline is not None and not running:
            self._success_deadline = None  # every replica ended by itself
            self._finished = True
            return
        if not self._stopping or running:
            return
        self._stopping, self._stop_deadline = False, None
        if not self._then_restart:
            self._finished = True
            return
        self._job_restarts += 1
        self._out.note(f"job restart {self._job_restarts} of {self._plan.max_restarts}")
        for slot in self._slots.values():
            slot.restarts = self._job_restarts
            self._start(slot)

    def _on_deadlines(self, now: float) -> None:
        if self._success_deadline is not None and now >= self._success_deadline:
            self._stop_after_success()
        while self._pending_kills and self._t0 + self._pending_kills[0].seconds <= now:
            self._inject(self._pending_kills.pop(0))
        timeout = self._plan.timeout
        if timeout is not None and self._outcome is None and now >= self._t0 + timeout:
            reason = f"--timeout {timeout:g} s reached"
            self._out.note(reason + "; stopping every replica")
            self._stop(TIMED_OUT, EXIT_TIMEOUT, reason)
        if self._stop_deadline is not None and now >= self._stop_deadline:
            self._stop_deadline = None
            for slot in self._slots.values():
                if slot.proc is not None:
                    self._out.note(f"{slot.name} outlived the grace period: SIGKILL", slot.name)
                    slot.proc.signal(signal.SIGKILL)
        for slot in self._slots.values():
            if slot.term_deadline is not None and now >= slot.term_deadline and slot.proc:
                slot.term_deadline = None
                slot.proc.signal(signal.SIGKILL)

    def _inject(self, kill: Kill) -> None:
        slot = self._slots[kill.replica_name]
        ending = self._stopping or self._success_deadline is not None
        if slot.proc is None or ending:
            why = "the job is stopping" if ending else f"{slot.name} is not running"
            self._out.note(f"--kill {kill}: {why}; nothing to kill")
            return
        # Its peers' tracebacks follow (a collective lost a member): say first that they are
        # the rehearsal working, not a second failure.
        self._out.note(
            f"--kill {kill}: sending {kill.signal.name} to {slot.name}; replicas that train "
            "with it are expected to fail too, and restart",
            slot.name,
        )
        self._last_kill = (slot.name, time.monotonic())
        slot.injected = True
        slot.proc.signal(kill.signal)
        if kill.signal != signal.SIGKILL:
            slot.term_deadline = time.monotonic() + self._plan.grace

    def _kill_all(self) -> None:
        for slot in self._slots.values():
            if slot.proc is not None:  # `reap` kills its whole group first
                if slot.proc.pidfd is not None:
                    self._sel.unregister(slot.proc.pidfd)
                slot.exit_code = slot.proc.reap()
                slot.proc, slot.end, slot.stopped = None, time.monotonic(), True

    # -- signals to vtrain itself --------------------------------------------------------

    def _catch_signals(self) -> Callable[[], None]:
        if threading.current_thread() is not threading.main_thread():
            return lambda: None  # only the main thread may handle signals; the caller does

        def handler(signum: int, frame: object) -> None:
            # Only note it here: the loop acts on it, never in the middle of a Popen.
            self._signals.append(signum)
            with contextlib.suppress(OSError):  # a full pipe already says "wake up"
                os.write(self._wake_w, b"\0")

        previous = {sig: signal.signal(sig, handler) for sig in _STOP_SIGNALS}

        def restore() -> None:
            for sig, old in previous.items():
                signal.signal(sig, old)

        return restore

    def _on_wake(self) -> None:
        try:
            while os.read(self._wake_r, 512):
                pass
        except BlockingIOError:
            pass
        while self._signals:
            name = signal.Signals(self._signals.pop(0)).name
            if not self._interrupted:
                self._interrupted = True
                self._out.note(f"{name} received: stopping every replica (again to kill now)")
                self._stop(INTERRUPTED, 128 + signal.Signals[name], f"vtrain received {name}")
            else:
                self._out.note(f"{name} received again: killing every replica")
                self._stop_deadline = time.monotonic()

    # -- the end -------------------------------------------------------------------------

    def _result(self) -> JobResult:
        outcome, status, reason = self._outcome or (FAILED, 1, "vtrain stopped unexpectedly")
        now = time.monotonic()
        replicas = tuple(
            ReplicaResult(
                name=s.name,
                restarts=s.restarts,
                exit_code=s.exit_code,
                stopped=s.stopped,
                after_success=s.after_success,
                wall_seconds=(s.end or now) - (s.first_start or now),
            )
            for s in self._slots.values()
        )
        return JobResult(outcome=outcome, status=status, replicas=replicas, reason=reason)
