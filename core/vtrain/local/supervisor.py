"""Starting, watching, restarting, killing and stopping the replicas of a local job.

One thread and one selector: it wakes on a replica's output, on the keeper's
word that a replica exited (`vtrain.local.keeper`, which starts them all), on a
signal to vtrain (a self-pipe) and at the next deadline (an injected kill, the
job's timeout, the end of a grace period). The platform's rules live here: the
job succeeds when the chief exits 0, a failing or killed replica restarts up to
--max-restarts times, and stopping is SIGTERM, then SIGKILL after the grace
period. Two local touches: after the chief's success the replicas that train get
a moment to finish by themselves (those that serve, which never would, are
stopped at once), and a replica whose command fails at once, the same way twice,
or whose script refuses its arguments (a usage error, exit status 2), is not
restarted again: a restart would only repeat it.
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence

from vtrain.cluster.roles import CHIEF
from vtrain.context import output_dirs
from vtrain.errors import LaunchError
from vtrain.local.addresses import separate_hosts, shared_host_note
from vtrain.local.disks import DISKS_FOLDER, Disks
from vtrain.local.environment import metric_file, replica_env
from vtrain.local.evidence import Evidence, Run, newest_checkpoint
from vtrain.local.keeper import Keeper, KeeperGone
from vtrain.local.output import Output
from vtrain.local.plan import Kill, Plan, Replica
from vtrain.local.ports import reserve_ports
from vtrain.local.process import ReplicaProcess, kill_group
from vtrain.local.quiet import Quiet
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
from vtrain.local.serving import ServingFiles
from vtrain.local.sockets import Sampler
from vtrain.local.usage_error import TAIL_LINES, refused_arguments
from vtrain.os_hints import OUT_OF_DESCRIPTORS, hint_for
from vtrain.variables import SERVES_FILE

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

_DRAIN_SECONDS = 1.0
# How long the end of the job waits for the keeper's word on replicas killed with SIGKILL.
_KILLED_SECONDS = 10.0
_CHUNK = 65536
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PREEMPTION_NOTICE = 30.0
"""Seconds between the SIGTERM and the SIGKILL of a preempted VM (Compute Engine's notice for
spot and preemptible VMs): how long an injected `--kill …:TERM` lets the replica save."""
# Workers finishing the same last step as the chief end a moment after it; stopping them
# at once would show a successful job's workers as SIGTERMed. The grace ends as soon as
# they have all exited; replicas that serve do not get it.
SUCCESS_GRACE_SECONDS = 1.0
# A run that fails this soon after its start failed before training began (no such file,
# an import error): when the next run fails the same way, restarts would only repeat it.
IMMEDIATE_SECONDS = 1.0
# The first lines of each run are kept for the verdict: where it started (`resume`).
HEAD_LINES = 200
# vtrain's notes (the job's header) wait this long after the replicas' start, unless a
# replica prints first: writing them compiles the redaction patterns, milliseconds of CPU
# that the replicas, all starting at once, would otherwise wait for.
NOTES_AFTER_SECONDS = 0.25
PROBE_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe")


def run_job(
    plan: Plan,
    *,
    stream: TextIO | None = None,
    colour: bool | None = None,
    environ: Mapping[str, str] | None = None,
) -> JobResult:
    """Run every replica of `plan` to the job's end, as its platform would; leave no process."""
    with reserve_ports(plan.size) as ports:
        hosts = separate_hosts(plan.size)
        replicas = plan.replicas(ports, hosts or ())
        try:
            metric_folder = os.path.dirname(metric_file(plan, replicas[0]))
            for folder in (*output_dirs(plan.output_dir, plan.trial_id).values(), metric_folder):
                os.makedirs(folder, exist_ok=True)
            # Per trial: the parallel trials of a study share one --output-dir. The logs are
            # opened once the replicas are on their way (`_Supervisor.run`).
            output = Output(
                [r.name for r in replicas],
                plan.trial_dir,
                stream or sys.stdout,
                colour=colour,
                open_logs=False,
            )
            disks = Disks(
                os.path.join(plan.trial_dir, DISKS_FOLDER), os.getcwd(), reuse=not plan.shared_disk
            )
        except OSError as e:
            raise _unwritable(plan, e) from None
        try:
            serving = _serving_files()
            try:
                where = ", ".join(f"{r.name} {r.address}" for r in replicas)
                output.hold()  # written once the replicas have started (see Output.hold)
                output.note(f"job {plan.job_id} ({plan.platform}) in {plan.output_dir}: {where}")
                notes: tuple[str, ...] = () if hosts else (shared_host_note(),)
                for note in notes:
                    output.note(f"note: {note}")
                if plan.shared_disk:
                    notes += ("--shared-disk: one disk for every replica; local-disk not checked",)
                evidence = _evidence(plan, replicas, environ, separate=hosts is not None)
                supervisor = _Supervisor(plan, replicas, output, environ, serving)
                result = supervisor.run(evidence, None if plan.shared_disk else disks)
                output.write(result.table())
                from vtrain.local.checks import judge  # only now: the job's start goes first

                result = result.with_verdict(judge(evidence, notes))
            finally:
                serving.remove()
                disks.close()
        finally:
            output.close()
    return result


def _unwritable(plan: Plan, e: OSError) -> LaunchError:
    """The error for the job's folders or logs that could not be made or opened."""
    if e.errno in OUT_OF_DESCRIPTORS:  # the limit, not the folder: say so
        return LaunchError(
            f"cannot open the job's logs ({e.strerror})",
            value=f"{plan.size} replicas",
            hint=hint_for(e),
        )
    return LaunchError(
        f"cannot write the job's folders ({e.strerror or e})",
        source="--output-dir",
        value=plan.output_dir,
        expected="a folder this user can create and write",
        hint=hint_for(e),
    )


def _evidence(
    plan: Plan, replicas: Sequence[Replica], environ: Mapping[str, str] | None, separate: bool
) -> Evidence:
    dirs = output_dirs(plan.output_dir, plan.trial_id)
    chief_env = (plan.role_env or {}).get(CHIEF, {})
    metric_id = chief_env.get("CLOUD_ML_HP_METRIC_TAG") or (
        os.environ if environ is None else environ
    ).get("CLOUD_ML_HP_METRIC_TAG")
    evidence = Evidence(
        hosts={r.name: r.host for r in replicas},
        ports={r.name: r.port for r in replicas},
        separate_hosts=separate,
        model_dir=dirs["AIP_MODEL_DIR"],
        checkpoint_dir=dirs["AIP_CHECKPOINT_DIR"],
        metric_files={r.name: metric_file(plan, r) for r in replicas},
        metric_id=metric_id,
    )
    evidence.shared_disk = plan.shared_disk
    return evidence


def _serving_files() -> ServingFiles:
    try:
        return ServingFiles.create()
    except OSError as e:
        raise LaunchError(
            f"cannot create the job's private folder ({e.strerror or e})",
            source="TMPDIR",
            value=os.environ.get("TMPDIR") or "/tmp",
            expected="a folder this user can create folders in",
            hint=hint_for(e),
        ) from None


class _Stream:
    """The read end of one run's stdout and stderr, its unfinished last line and its last lines."""

    def __init__(self, fd: int, name: str) -> None:
        self.fd = fd
        self.name = name
        self.pending = b""
        self.tail: deque[bytes] = deque(maxlen=TAIL_LINES)
        self.head: list[bytes] = []


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
        self.runs: list[Run] = []
        """Every run so far, the current one last (the verdict's evidence)."""

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
        serving: ServingFiles,
    ) -> None:
        self._plan = plan
        self._replicas = tuple(replicas)
        self._out = output
        self._environ = os.environ if environ is None else environ
        self._slots = {r.name: _Slot(r) for r in replicas}
        self._serving = serving
        self._keeper: Keeper | None = None
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
        self._last_kill_text: str | None = None
        self._quiet = Quiet()
        self._heard = time.monotonic()
        """When a replica last printed a line (or when vtrain last said who is silent)."""
        self._evidence: Evidence | None = None
        self._disks: Disks | None = None
        self._finished = False
        self._notes_at: float | None = None
        """When the held notes are written, unless something is written before."""
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._t0 = time.monotonic()

    # -- the loop ------------------------------------------------------------------------

    def run(self, evidence: Evidence | None = None, disks: Disks | None = None) -> JobResult:
        """Run the job to its end; what each run did goes into `evidence`, each run on a disk
        of its own from `disks` (None: in vtrain's folder)."""
        self._evidence, self._disks = evidence, disks
        # Before the handlers: the keeper is a fork of vtrain, and sets its own.
        try:
            self._keeper = Keeper.start(self._serving.folder)
        except OSError as e:  # a process or descriptor limit
            raise LaunchError(
                f"cannot start the job's keeper process ({e.strerror or e})",
                value=f"{self._plan.size} replicas",
                hint=hint_for(e, "stop other programs, or raise `ulimit -u` and `ulimit -n`"),
            ) from None
        self._sel.register(self._keeper.fileno(), selectors.EVENT_READ, "keeper")
        sampler = Sampler(self._leaders) if evidence is not None else None
        restore = self._catch_signals()
        try:
            self._t0 = time.monotonic()
            try:
                try:
                    self._start(*self._slots.values())
                except BaseException:
                    with contextlib.suppress(OSError):  # what the started ones said is kept
                        self._out.open_logs()
                    raise
                # Made or emptied while the replicas start: each new file is an inode.
                try:
                    self._out.open_logs()
                except OSError as e:
                    raise _unwritable(self._plan, e) from None
                # Once the replicas have started: what follows is not theirs to wait for. The
                # threads come after the keeper's fork too: a fork copies no thread.
                self._notes_at = time.monotonic() + NOTES_AFTER_SECONDS
                if sampler is not None:
                    sampler.start()
                if disks is not None:
                    disks.clean()
                while not self._finished:
                    self._step()
            except KeeperGone as e:
                self._keeper_lost(str(e))
        finally:
            # Also after an error of our own: nothing we started may outlive the job.
            self._kill_all()
            self._sel.unregister(self._keeper.fileno())
            self._keeper.close()  # and what escaped the replicas' groups goes with it
            self._drain()
            if sampler is not None and evidence is not None:
                sampler.stop()
                evidence.sockets |= sampler.found
            self._end_runs()
            restore()
            self._sel.close()
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._out.flush()
        result = self._result()
        if evidence is not None:
            evidence.succeeded = result.outcome == SUCCEEDED
        return result

    def _leaders(self) -> dict[int, str]:
        """The running replicas' pids (each leads its session) -> their names."""
        return {s.proc.pid: s.name for s in list(self._slots.values()) if s.proc is not None}

    def _new_run(self, slot: _Slot, env: dict[str, str]) -> str | None:
        """Record the run `slot` starts, give it its disk and probe; its working folder."""
        if self._evidence is None:
            return None
        number = len(slot.runs)
        folder = os.path.join(self._plan.trial_dir, DISKS_FOLDER, slot.name)
        disk = None if self._disks is None else self._disks.prepare(slot.name, number)
        if disk is None:
            os.makedirs(folder, exist_ok=True)
        kill = self._last_kill_text if number else None
        run = Run(slot.name, number, disk, os.path.join(folder, f"run-{number}.record"), kill)
        if kill is not None:
            run.committed = newest_checkpoint(self._evidence.checkpoint_dir)
        with contextlib.suppress(FileNotFoundError):
            # A --output-dir used before: emptied, not removed, so that the replica's probe
            # does not make a new file (an inode: up to half a millisecond of its start).
            os.truncate(run.record, 0)
        if disk is not None:
            env.update(disk.variables(env))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (PROBE_FOLDER, env.get("PYTHONPATH")) if p)
        env["VTRAIN_LOCAL_RECORD"] = run.record
        env["VTRAIN_LOCAL_WATCH"] = self._evidence.model_dir
        slot.runs.append(run)
        self._evidence.runs.append(run)
        return None if disk is None else disk.work

    def _end_run(self, slot: _Slot) -> None:
        """What the run that just ended wrote on its disk, said first and last."""
        if not slot.runs or slot.runs[-1].exit_code is not None:
            return
        run = slot.runs[-1]
        run.exit_code = slot.exit_code if slot.exit_code is not None else -signal.SIGKILL
        if slot.stream is not None:
            lines = [*slot.stream.tail, slot.stream.pending]
            run.tail = [b.decode(errors="replace") for b in lines]
            run.head = [b.decode(errors="replace") for b in slot.stream.head]
            if not slot.injected:
                run.refused = refused_arguments(run.exit_code, lines)
        if run.disk is not None:
            with contextlib.suppress(OSError):
                run.written = run.disk.written()

    def _end_runs(self) -> None:
        for slot in self._slots.values():
            self._end_run(slot)

    def _step(self) -> None:
        assert self._keeper is not None
        # Exits the keeper already told (while a replica started) wake nothing: look now.
        timeout = 0.0 if self._keeper.has_exits else self._next_deadline(time.monotonic())
        for key, _ in self._sel.select(timeout):
            if key.data == "wake":
                self._on_wake()
            elif key.data == "keeper":
                self._keeper.receive()
            elif isinstance(key.data, _Stream):
                self._read(key.data)
        for pid, status in self._keeper.exits():
            self._exited(pid, status)
        self._on_deadlines(time.monotonic())
        self._advance()
        self._out.flush()

    def _next_deadline(self, now: float) -> float | None:
        times = [s.term_deadline for s in self._slots.values() if s.term_deadline is not None]
        if self._pending_kills:
            times.append(self._t0 + self._pending_kills[0].seconds)
        if self._plan.timeout is not None and self._outcome is None:
            times.append(self._t0 + self._plan.timeout)
        for deadline in (self._stop_deadline, self._success_deadline, self._notes_at):
            if deadline is not None:
                times.append(deadline)
        if not self._stopping:
            times.append(self._heard + self._plan.quiet_after)
        return max(0.0, min(times) - now) if times else None

    # -- starting and reading ------------------------------------------------------------

    def _start(self, *slots: _Slot) -> None:
        assert self._keeper is not None
        failed: LaunchError | None = None
        # Each replica is sent to the keeper as soon as it is prepared: see Keeper.spawn.
        started = ReplicaProcess.start(self._keeper, self._prepared(slots))
        for slot, proc in zip(slots, started, strict=True):
            if isinstance(proc, LaunchError):
                failed = failed or proc
                continue
            stream = _Stream(proc.output, slot.name)
            self._streams.add(stream)
            self._sel.register(proc.output, selectors.EVENT_READ, stream)
            slot.proc, slot.stream, slot.injected, slot.stopped = proc, stream, False, False
            slot.exit_code, slot.started = None, time.monotonic()
            if slot.first_start is None:
                slot.first_start = time.monotonic()
        if failed is not None:
            raise failed

    def _prepared(
        self, slots: Sequence[_Slot]
    ) -> Iterator[tuple[str, Sequence[str], dict[str, str], str | None]]:
        """(name, command, env, working folder) of each slot's next run, prepared as it is
        asked for."""
        # One copy for all: os.environ decodes every name and value at each look.
        environ = dict(self._environ)
        for slot in slots:
            env = replica_env(
                self._plan, self._replicas, slot.replica, restarts=slot.restarts, environ=environ
            )
            self._serving.forget(slot.name)
            self._quiet.restarted(slot.name)
            env[SERVES_FILE] = self._serving.path(slot.name)
            try:
                cwd = self._new_run(slot, env)
            except OSError as e:
                raise LaunchError(
                    f"cannot prepare {slot.name}'s own disk ({e.strerror or e})",
                    source="--output-dir",
                    value=self._plan.output_dir,
                    expected="a folder this user can write (or --shared-disk)",
                    hint=hint_for(e),
                ) from None
            yield slot.name, self._plan.command_of(slot.replica.role), env, cwd

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
        self._heard = time.monotonic()
        for line in lines:
            self._line(stream.name, line)
        stream.tail.extend(lines)
        if len(stream.head) < HEAD_LINES:
            stream.head.extend(lines[: HEAD_LINES - len(stream.head)])
        if len(stream.pending) > _CHUNK:  # a replica that never ends its line is still shown
            self._out.line(stream.name, stream.pending)
            stream.pending = b""
        return True

    def _line(self, name: str, line: bytes) -> None:
        """A line a replica printed: shown and logged, or logged alone (a lost peer's traceback)."""
        show, first = self._quiet.sort(name, self._slots[name].started, line, time.monotonic())
        if first is not None:
            self._out.aside(name, first)
        if show:
            self._out.line(name, line)
        else:
            self._out.log_only(name, line)

    def _close_stream(self, stream: _Stream) -> None:
        if stream.pending:
            self._line(stream.name, stream.pending)
            stream.tail.append(stream.pending)
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

    def _slot_of(self, pid: int) -> _Slot | None:
        for slot in self._slots.values():
            if slot.proc is not None and slot.proc.pid == pid:
                return slot
        return None

    def _exited(self, pid: int, status: int) -> None:
        """The keeper reaped replica `pid` (and killed what it left in its group)."""
        slot = self._slot_of(pid)
        if slot is None:
            return
        code = os.waitstatus_to_exitcode(status)
        if slot.stream is not None:
            while self._read(slot.stream):
                pass
        slot.proc, slot.end, slot.exit_code, slot.term_deadline = None, time.monotonic(), code, None
        self._end_run(slot)
        self._on_exit(slot, code)

    def _on_exit(self, slot: _Slot, code: int) -> None:
        how = describe_exit(code)
        tail = [] if slot.stream is None else [*slot.stream.tail, slot.stream.pending]
        preempted = _preempted(code, tail)
        if self._stopping:
            # A replica that committed its preemption save before the stop says so: under the
            # whole-job policy the peers are stopped as soon as the first one leaves.
            self._out.note(f"{slot.name} {preempted or f'stopped ({how})'}", slot.name)
            return
        if self._success_deadline is not None:  # the job has succeeded: nothing restarts
            if slot.stopped:
                self._out.note(f"{slot.name} stopped ({how})", slot.name)
            else:
                self._out.note(
                    f"{slot.name} exited with {how} after the chief's success", slot.name
                )
            return
        plan = self._plan
        if not slot.injected and code == 0:
            if slot.replica.role == CHIEF:
                self._on_chief_success(slot)
            else:
                self._out.note(f"{slot.name} finished", slot.name)
            return
        # A failure, or a replica whose "machine" was killed: the platform restarts it.
        self._quiet.lost(slot.name, time.monotonic())
        why = "was killed (--kill)" if slot.injected else f"exited with {how}"
        why = preempted or why
        killed = self._last_kill
        if not slot.injected and killed and slot.started and slot.started <= killed[1]:
            why += f", as expected after {killed[0]}'s kill"
        used = self._job_restarts if plan.restart_job else slot.restarts
        refused = None if slot.injected else refused_arguments(code, tail)
        if refused is not None:
            reason = f"{slot.name}'s script refused its arguments ({refused})"
            self._out.note(
                reason + "; not restarting it: a restart passes the same arguments", slot.name
            )
            self._stop(FAILED, shell_status(code), reason)
            return
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
        elif (cannot := self._no_lone_restart()) is not None:
            # What the platform would do (restart it alone) would hang: say so, and end.
            reason = (
                f"{slot.name} {why}: {cannot}, so restart the whole job "
                "(--restart-job-on-worker-restart here, scheduling.restartJobOnWorkerRestart "
                "on Vertex)"
            )
            self._out.note(reason, slot.name)
            self._stop(FAILED, max(1, shell_status(code)), reason)
        else:
            slot.restarts += 1
            self._out.note(
                f"{slot.name} {why}; restart {slot.restarts} of {plan.max_restarts}", slot.name
            )
            self._start(slot)

    def _no_lone_restart(self) -> str | None:
        """Why a replica restarted alone cannot rejoin this job, as its services say; or None."""
        for name in self._slots:
            reason = self._serving.job_restarts(name)
            if reason is not None:
                return reason
        return None

    def _on_chief_success(self, slot: _Slot) -> None:
        self._outcome = (SUCCEEDED, 0, f"{slot.name} exited 0")
        running = [s for s in self._slots.values() if s.proc is not None]
        if not running:
            self._out.note(f"{slot.name} finished", slot.name)
            self._finished = True
            return
        # Replicas that serve never exit by themselves: they would only wait out the grace.
        serving = [s for s in running if self._serving.serves(s.name)]
        training = [s for s in running if s not in serving]
        if training:
            names = ", ".join(s.name for s in training)
            self._out.note(
                f"{slot.name} finished; the other replicas ({names}) have "
                f"{SUCCESS_GRACE_SECONDS:g} s to exit before they are stopped",
                slot.name,
            )
        else:
            self._out.note(f"{slot.name} finished", slot.name)
        self._success_deadline = time.monotonic() + SUCCESS_GRACE_SECONDS
        if serving:
            names = ", ".join(s.name for s in serving)
            self._out.note(
                f"stopping {names} at once after the chief's success "
                "(replicas that serve never exit by themselves)"
            )
            for s in serving:
                self._stop_one(s)

    def _stop_one(self, slot: _Slot) -> None:
        """Stop one replica after the chief's success: SIGTERM, SIGKILL after the grace period."""
        assert slot.proc is not None
        slot.stopped = slot.after_success = True
        slot.proc.signal(signal.SIGTERM)
        slot.term_deadline = time.monotonic() + self._plan.grace

    def _stop_after_success(self) -> None:
        self._success_deadline = None
        running = [s for s in self._slots.values() if s.proc is not None and not s.stopped]
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
        self._start(*self._slots.values())

    def _on_deadlines(self, now: float) -> None:
        if self._notes_at is not None and now >= self._notes_at:
            self._notes_at = None
            self._out.release()
        if self._success_deadline is not None and now >= self._success_deadline:
            self._stop_after_success()
        while self._pending_kills and self._t0 + self._pending_kills[0].seconds <= now:
            self._inject(self._pending_kills.pop(0))
        timeout = self._plan.timeout
        if timeout is not None and self._outcome is None and now >= self._t0 + timeout:
            reason = f"--timeout {timeout:g} s reached"
            self._out.note(reason + "; stopping every replica")
            self._stop(TIMED_OUT, EXIT_TIMEOUT, reason)
        if not self._stopping and now >= self._heard + self._plan.quiet_after:
            self._say_who_is_silent(now)
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

    def _say_who_is_silent(self, now: float) -> None:
        """No replica has printed for --quiet-after: one line each, its last words and their age."""
        silent = now - self._heard
        self._heard = now  # said once per stretch of silence
        for slot in self._slots.values():
            if slot.proc is None or slot.stream is None or slot.started is None:
                continue
            lines = [line for line in slot.stream.tail if line.strip()]
            last = lines[-1].decode("utf-8", "replace").strip() if lines else "nothing yet"
            self._out.note(
                f"{slot.name}: silent for {silent:.0f} s, running for {now - slot.started:.0f} s; "
                f"its last line: {last[:200]}",
                slot.name,
            )

    def _inject(self, kill: Kill) -> None:
        slot = self._slots[kill.replica_name]
        ending = self._stopping or self._success_deadline is not None
        if slot.proc is None or ending:
            why = "the job is stopping" if ending else f"{slot.name} is not running"
            self._out.note(f"--kill {kill}: {why}; nothing to kill")
            return
        # Its peers' tracebacks follow (a collective lost a member): say first that they are
        # the rehearsal working, not a second failure.
        notice = (
            f" (a preemption notice: SIGKILL in {PREEMPTION_NOTICE:g} s unless it exits)"
            if kill.signal == signal.SIGTERM
            else ""
        )
        self._out.note(
            f"--kill {kill}: sending {kill.signal.name} to {slot.name}{notice}; replicas that "
            "train with it are expected to fail too, and restart",
            slot.name,
        )
        self._last_kill = (slot.name, time.monotonic())
        self._last_kill_text = str(kill)
        self._quiet.lost(slot.name, time.monotonic())
        slot.injected = True
        slot.proc.signal(kill.signal)
        if kill.signal == signal.SIGTERM:
            # A preemption (a spot reclaim, a maintenance event): the VM is gone 30 s later,
            # whatever the replica does meanwhile. Its SIGTERM save has that long, not --grace.
            slot.term_deadline = time.monotonic() + PREEMPTION_NOTICE
        elif kill.signal != signal.SIGKILL:
            slot.term_deadline = time.monotonic() + self._plan.grace

    def _kill_all(self) -> None:
        """SIGKILL every replica still running, and take its exit status from the keeper."""
        keeper = self._keeper
        running = {s.proc.pid: s for s in self._slots.values() if s.proc is not None}
        for slot in running.values():
            slot.stopped = True
        try:
            if keeper is None:
                raise KeeperGone("it did not start")
            for pid in running:
                keeper.signal(pid, signal.SIGKILL)
            end = time.monotonic() + _KILLED_SECONDS
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

    def _keeper_lost(self, why: str) -> None:
        """The keeper ended before the job: stop every replica at once, and fail the job."""
        assert self._keeper is not None
        reason = f"vtrain's keeper process (pid {self._keeper.pid}) ended unexpectedly ({why})"
        self._out.note(reason + "; killing every replica")
        if self._outcome is None or self._outcome[0] != SUCCEEDED:
            self._outcome = (FAILED, 1, reason)
        self._finished = True

    # -- signals to vtrain itself --------------------------------------------------------

    def _catch_signals(self) -> Callable[[], None]:
        def handler(signum: int, frame: object) -> None:
            # Only note it here: the loop acts on it, never in the middle of a Popen.
            self._signals.append(signum)
            with contextlib.suppress(OSError):  # a full pipe already says "wake up"
                os.write(self._wake_w, b"\0")

        try:
            previous = {sig: signal.signal(sig, handler) for sig in _STOP_SIGNALS}
        except ValueError:  # only the main thread may handle signals; the caller does
            return lambda: None

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


def _preempted(code: int, tail: list[bytes]) -> str | None:
    """`preempted (SIGTERM): committed step N` when a replica ended so after saying it.

    Ended so: it exited 143, or a SIGTERM ended it on its way out after the commit
    (vtrain's own stop of the job, once the framework gave the default handler back).
    """
    if code not in (128 + signal.SIGTERM, -signal.SIGTERM):
        return None
    from vtrain.preemption import committed_step  # only here: it loads `typing`

    step = committed_step(tail)
    return None if step is None else f"preempted (SIGTERM): committed step {step}"
