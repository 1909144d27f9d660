"""Starting, watching, restarting, killing and stopping the replicas of a local job.

One thread and one selector: it wakes on a replica's output (`vtrain.local.streams`),
on the keeper's word that a replica exited (`vtrain.local.keeper`, which starts them
all), on a signal to vtrain (`vtrain.local.interrupts`) and at the next deadline
(`vtrain.local.deadlines`: an injected kill, the job's timeout, the end of a grace
period). What an exit leads to is the platform's rule, decided apart from the loop
(`vtrain.local.restart_policy`); the loop acts on it. Stopping is SIGTERM, then
SIGKILL after the grace period.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import time
from collections.abc import Iterator, Mapping, Sequence

from vtrain.errors import LaunchError
from vtrain.local import restart_policy as policy
from vtrain.local.deadlines import Deadlines
from vtrain.local.disks import Disks
from vtrain.local.environment import replica_env
from vtrain.local.evidence import Evidence
from vtrain.local.injector import Injector
from vtrain.local.interrupts import WAKE, Interrupts
from vtrain.local.keeper import Keeper, KeeperGone
from vtrain.local.launch_errors import no_keeper, unwritable
from vtrain.local.live import rows
from vtrain.local.notes import Notes
from vtrain.local.output import Output
from vtrain.local.plan import Kill, Plan, Replica
from vtrain.local.process import ReplicaProcess
from vtrain.local.quiet import Quiet
from vtrain.local.result import EXIT_TIMEOUT, FAILED, INTERRUPTED, SUCCEEDED, TIMED_OUT, JobResult
from vtrain.local.runs import Runs, Unrecorded
from vtrain.local.serving import ServingFiles
from vtrain.local.slots import Slot, kill_all, results
from vtrain.local.sockets import Sampler
from vtrain.local.streams import Stream, Streams
from vtrain.variables import PROGRESS_FILE, SERVES_FILE


class Supervisor:
    """Runs one job's replicas to the job's end, as the platform would."""

    def __init__(
        self,
        plan: Plan,
        replicas: Sequence[Replica],
        output: Output,
        note: Notes,
        environ: Mapping[str, str] | None,
        serving: ServingFiles,
    ) -> None:
        self._plan = plan
        self._rules = policy.Rules(plan.max_restarts, plan.restart_job)
        self._replicas = tuple(replicas)
        self._out = output
        self._note = note
        self._environ = os.environ if environ is None else environ
        self._slots = {r.name: Slot(r) for r in replicas}
        self._serving = serving
        self._keeper: Keeper | None = None
        self._sel = selectors.DefaultSelector()
        self._streams = Streams(self._sel, self._line, self._unended)
        self._deadlines = Deadlines(plan, output.progress_every)
        self._interrupts = Interrupts(self._sel)
        self._interrupted = self._stopping = self._then_restart = self._finished = False
        self._outcome: tuple[str, int, str] | None = None
        self._job_restarts = 0
        self._last_kill: tuple[Kill, float] | None = None
        """The --kill that killed last, and when."""
        self._quiet = Quiet()
        self._faults = Injector(
            plan, self._slots, self._deadlines, note, output, serving, self._environ
        )
        self._runs: Runs | Unrecorded = Unrecorded()  # where each run goes on record
        self._ended_by: str | None = None  # the replica whose exit stopped the job

    # -- the loop ------------------------------------------------------------------------

    def run(self, evidence: Evidence | None = None, disks: Disks | None = None) -> JobResult:
        """Run the job to its end; what each run did goes into `evidence`, each run on a disk
        of its own from `disks` (None: in vtrain's folder)."""
        if evidence is not None:
            self._runs = Runs(evidence, disks, self._plan.trial_dir, self._plan.output_dir)
        self._faults.runs = self._runs
        # Before the handlers: the keeper is a fork of vtrain, and sets its own.
        try:
            job = os.path.basename(self._plan.output_dir)
            self._keeper = Keeper.start(self._serving.folder, job)
        except OSError as e:  # a process or descriptor limit
            raise no_keeper(self._plan, e) from None
        self._sel.register(self._keeper.fileno(), selectors.EVENT_READ, "keeper")
        self._runs.watch(self._keeper.pid)  # before the first replica: watched from its start
        sampler = Sampler(self._leaders) if evidence is not None else None
        restore = self._interrupts.catch()
        try:
            self._deadlines.start(time.monotonic())
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
                    raise unwritable(self._plan, e) from None
                # Once the replicas have started: what follows is not theirs to wait for. The
                # threads come after the keeper's fork too: a fork copies no thread.
                self._deadlines.started(time.monotonic())
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
            kill_all(self._keeper, self._slots.values())
            self._sel.unregister(self._keeper.fileno())
            self._keeper.close()  # and what escaped the replicas' groups goes with it
            self._streams.drain()
            self._runs.unwatch()
            if sampler is not None and evidence is not None:
                sampler.stop()
                evidence.sockets |= sampler.found
            for slot in self._slots.values():
                slot.end_run()
            restore()
            self._sel.close()
            self._interrupts.close()
            self._out.flush()
        result = self._result()
        self._runs.ended(result, self._ended_by, time.monotonic() - self._deadlines.t0)
        return result

    def _leaders(self) -> dict[int, str]:
        """The running replicas' pids (each leads its session) -> their names."""
        return {s.proc.pid: s.name for s in list(self._slots.values()) if s.proc is not None}

    def _step(self) -> None:
        assert self._keeper is not None
        # Exits the keeper already told (while a replica started) wake nothing: look now.
        now = time.monotonic()
        heard = None if self._stopping else self._streams.heard
        wait = self._deadlines.wait(now, ended=self._outcome is not None, heard=heard)
        for key, _ in self._sel.select(0.0 if self._keeper.has_exits else wait):
            if key.data == WAKE:
                self._on_signals()
            elif key.data == "keeper":
                self._keeper.receive()
            elif isinstance(key.data, Stream):
                self._streams.read(key.data)
        for pid, status in self._keeper.exits():
            self._exited(pid, status)
        self._on_deadlines(time.monotonic())
        self._advance()
        self._out.flush()

    # -- starting and reading ------------------------------------------------------------

    def _start(self, *slots: Slot) -> None:
        assert self._keeper is not None
        failed: LaunchError | None = None
        # Each replica is sent to the keeper as soon as it is prepared: see Keeper.spawn.
        started = ReplicaProcess.start(self._keeper, self._prepared(slots))
        for slot, proc in zip(slots, started, strict=True):
            if isinstance(proc, LaunchError):
                failed = failed or proc
                continue
            slot.begin(proc, self._streams.open(proc.output, slot.name))
            self._deadlines.duty.started(slot.name, time.monotonic())
            self._runs.started(slot.runs, proc.pid)
        if failed is not None:
            raise failed

    def _prepared(
        self, slots: Sequence[Slot]
    ) -> Iterator[tuple[str, Sequence[str], dict[str, str], str | None]]:
        """(name, command, env, working folder) of each slot's next run, prepared as it is
        asked for."""
        # One copy for all: os.environ decodes every name and value at each look.
        environ = dict(self._environ)
        kill = None if self._last_kill is None else str(self._last_kill[0])
        for slot in slots:
            env = replica_env(
                self._plan, self._replicas, slot.replica, restarts=slot.restarts, environ=environ
            )
            self._serving.forget(slot.name)
            self._quiet.restarted(slot.name)
            env[SERVES_FILE] = self._serving.path(slot.name)
            env[PROGRESS_FILE] = self._serving.progress(slot.name)
            cwd = self._runs.new(slot.name, slot.runs, env, kill)
            yield slot.name, self._plan.command_of(slot.replica.role), env, cwd

    def _line(self, name: str, line: bytes) -> None:
        """A line a replica printed: logged; shown now, later or not (a lost peer's traceback)."""
        self._unhold()
        self._out.log_only(name, line)
        first, shown = self._quiet.sort(name, self._slots[name].started, line, time.monotonic())
        if first is not None:
            self._out.aside(name, first)
        for held in shown:
            self._out.show(name, held)

    def _unended(self, name: str, data: bytes) -> None:
        """A line that grew past a chunk without its end: shown as far as it goes."""
        self._unhold()
        self._out.line(name, data)

    def _unhold(self) -> None:
        if self._note.holding:  # a replica prints: the job's header goes first
            self._note.release()

    # -- exits ---------------------------------------------------------------------------

    def _exited(self, pid: int, status: int) -> None:
        """The keeper reaped replica `pid` (and killed what it left in its group)."""
        slot = next((s for s in self._slots.values() if s.proc and s.proc.pid == pid), None)
        if slot is None:
            return
        code = os.waitstatus_to_exitcode(status)
        if slot.stream is not None:
            self._streams.read_all(slot.stream)
        slot.ended(code)
        self._deadlines.sigkill.pop(slot.name, None)
        facts = self._facts(slot, code)
        self._act(slot, policy.decide(facts, self._rules), facts.tail)

    def _facts(self, slot: Slot, code: int) -> policy.Exit:
        """The facts of `slot`'s exit with `code`, as the restart policy takes them."""
        job = policy.STOPPING if self._stopping else policy.RUNNING
        if not self._stopping and self._deadlines.success is not None:
            job = policy.SUCCEEDED
        running = tuple(s.name for s in self._slots.values() if s.proc is not None)
        # Each is a file per replica: read only where a rule can use it.
        clean = code == 0 and not slot.injected
        serving = job == policy.RUNNING and clean
        lone = job == policy.RUNNING and not clean
        killed = self._last_kill
        return slot.exit(
            code,
            job=job,
            job_restarts=self._job_restarts,
            last_kill=None if killed is None else (killed[0].replica_name, killed[1]),
            running=running,
            serving=tuple(filter(self._serving.serves, running)) if serving else (),
            no_lone_restart=self._serving.no_lone_restart(self._slots) if lone else None,
        )

    def _act(self, slot: Slot, decision: policy.Decision, tail: Sequence[bytes]) -> None:
        """Do what the restart policy decided about `slot`'s exit."""
        for text, replica in decision.notes:
            self._note(text, replica)
        action = decision.action
        if action == policy.NOTE:
            return
        if action == policy.SUCCEED:
            self._outcome = (SUCCEEDED, 0, decision.reason)
            self._faults.release()  # a slowed replica ends by itself, or takes its SIGTERM
            if decision.grace is None:
                self._finished = True
                return
            self._deadlines.success = time.monotonic() + decision.grace
            for name in decision.stop_now:  # SIGTERM, SIGKILL after the grace period
                self._slots[name].terminate(after_success=True)
                self._deadlines.sigkill[name] = time.monotonic() + self._plan.grace
            return
        self._quiet.lost(slot.name, time.monotonic(), tail)
        slot.last_failure = decision.failed_at_once
        if action == policy.STOP:
            self._ended_by = slot.name
            self._stop(FAILED, decision.status, decision.reason)
        elif action == policy.RESTART_JOB:
            self._stop(None, 0, "", then_restart=True)
        else:
            slot.restarts += 1
            self._start(slot)

    def _stop_after_success(self) -> None:
        running = [s for s in self._slots.values() if s.proc is not None and not s.stopped]
        if running:
            self._note(f"stopping {', '.join(s.name for s in running)} after the chief's success")
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
            slot.terminate()
        self._faults.release()
        self._deadlines.stop = time.monotonic() + self._plan.grace

    def _advance(self) -> None:
        running = any(s.proc is not None for s in self._slots.values())
        if self._deadlines.success is not None and not running:
            self._deadlines.success = None  # every replica ended by itself
            self._finished = True
            return
        if not self._stopping or running:
            return
        self._stopping, self._deadlines.stop = False, None
        if not self._then_restart:
            self._finished = True
            return
        self._job_restarts += 1
        self._note(f"job restart {self._job_restarts} of {self._plan.max_restarts}")
        for slot in self._slots.values():
            slot.restarts = self._job_restarts
        self._start(*self._slots.values())

    def _on_deadlines(self, now: float) -> None:
        deadlines = self._deadlines
        if deadlines.due("notes", now):
            self._note.release()
        if deadlines.due_view(now):  # the live view, or the progress lines (`vtrain.local.live`)
            self._out.progress(rows(self._slots.values(), self._serving, time.time()))
        if deadlines.due("success", now):
            self._stop_after_success()
        for kill in deadlines.due_kills(now):
            self._inject(kill)
        self._faults.tick(now, running=not self._stopping and self._deadlines.success is None)
        if self._outcome is None and deadlines.timed_out(now):
            reason = f"--timeout {self._plan.timeout:g} s reached"
            self._note(reason + "; stopping every replica")
            self._stop(TIMED_OUT, EXIT_TIMEOUT, reason)
        if not self._stopping and deadlines.silent(now, self._streams.heard):
            self._say_who_is_silent(now)
        if deadlines.due("stop", now):
            for slot in self._slots.values():
                if slot.proc is not None:
                    self._note(f"{slot.name} outlived the grace period: SIGKILL", slot.name)
                    slot.proc.signal(signal.SIGKILL)
        for name in deadlines.due_sigkills(now):
            proc = self._slots[name].proc
            if proc is not None:
                proc.signal(signal.SIGKILL)

    def _say_who_is_silent(self, now: float) -> None:
        """No replica has printed for --quiet-after: one line each, its last words and their age."""
        silent = now - self._streams.heard
        self._streams.heard = now  # said once per stretch of silence
        for slot in self._slots.values():
            if (words := slot.last_words(now, silent)) is not None:
                self._note(words, slot.name)

    def _inject(self, kill: Kill) -> None:
        ending = self._stopping or self._deadlines.success is not None
        if self._faults.inject(kill, ending=ending):
            self._last_kill = (kill, time.monotonic())
            self._quiet.lost(kill.replica_name, time.monotonic())

    def _keeper_lost(self, why: str) -> None:
        """The keeper ended before the job: stop every replica at once, and fail the job."""
        assert self._keeper is not None
        reason = f"vtrain's keeper process (pid {self._keeper.pid}) ended unexpectedly ({why})"
        self._note(reason + "; killing every replica")
        if self._outcome is None or self._outcome[0] != SUCCEEDED:
            self._outcome = (FAILED, 1, reason)
        self._finished = True

    def _on_signals(self) -> None:
        """A signal to vtrain: the first stops every replica, the next kills them."""
        for sig in self._interrupts.received():
            if not self._interrupted:
                self._interrupted = True
                self._note(f"{sig.name} received: stopping every replica (again to kill now)")
                self._stop(INTERRUPTED, 128 + sig, f"vtrain received {sig.name}")
            else:
                self._note(f"{sig.name} received again: killing every replica")
                self._deadlines.stop = time.monotonic()

    # -- the end -------------------------------------------------------------------------

    def _result(self) -> JobResult:
        outcome, status, reason = self._outcome or (FAILED, 1, "vtrain stopped unexpectedly")
        replicas = results(self._slots.values())
        return JobResult(outcome=outcome, status=status, replicas=replicas, reason=reason)
