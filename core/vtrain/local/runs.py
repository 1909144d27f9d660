"""Each run of a replica as the verdict sees it: its disk, its probe's record, how it ended.

A run gets a disk of its own (its working folder, HOME and TMPDIR) and the probe
(`vtrain.local.probe`), which records what its Python code wrote, bound and
connected; at its end, its first and last lines and what it left on its disk.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

from vtrain.errors import LaunchError
from vtrain.local.disks import DISKS_FOLDER, Disks
from vtrain.local.evidence import Evidence, Run, newest_checkpoint
from vtrain.local.result import SUCCEEDED, JobResult
from vtrain.local.timeline import LauncherTimeline
from vtrain.local.usage_error import refused_arguments
from vtrain.os_hints import hint_for

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from vtrain.local.streams import Stream
    from vtrain.local.watch import Watcher

PROBE_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe")


class Runs:
    """Where each new run of the job's replicas goes on record, and on which disk."""

    def __init__(self, evidence: Evidence, disks: Disks | None, trial_dir: str, output_dir: str):
        """`disks`: a disk of its own for each run (None: every run in vtrain's folder)."""
        self._evidence = evidence
        evidence.trial_dir = trial_dir
        self._disks = disks
        self._trial_dir = trial_dir
        self._output_dir = output_dir
        self._watcher: Watcher | None = None
        self.timeline = LauncherTimeline(trial_dir)

    def watch(self, keeper: int) -> None:
        """See what every run writes and opens, whatever does it (`vtrain.local.watch`): the
        runs are the descendants of the keeper `keeper`."""
        if self._disks is None:
            return  # --shared-disk: nothing is any one replica's, local-disk is not checked
        from vtrain.local.watch import NOT_SEEN, Watcher  # only for a rehearsal with disks

        # Not tempfile.gettempdir(): tempfile loads shutil, before the replicas start.
        temp = os.environ.get("TMPDIR") or "/tmp"
        places = [self._trial_dir, os.getcwd(), temp, os.path.expanduser("~")]
        found = Watcher.start([p for p in places if os.path.isdir(p)], keeper)
        if isinstance(found, str):
            self._evidence.not_checked.append(f"{NOT_SEEN}: {found}")
        else:
            self._watcher = found

    def started(self, runs: list[Run], pid: int) -> None:
        """The last of `runs` started as process `pid`."""
        if runs:
            runs[-1].pid = pid
            self.timeline.launched(runs[-1].name, len(runs), pid, runs[-1].after_kill)
            if self._watcher is not None:
                self._watcher.started(pid, runs[-1])

    def fired(self, kill: str) -> None:
        """The --kill `kill` was sent."""
        self._evidence.fired.append(kill)
        self.timeline.killed(kill)

    def ended(self, result: JobResult, ended_by: str | None, seconds: float) -> None:
        """The job ended as `result` says, after `seconds`; `ended_by`: the replica whose exit
        stopped it (None: none did)."""
        ev = self._evidence
        for run in sorted(ev.runs, key=lambda r: r.ended):  # each process's end, in order
            if run.exit_code is not None:
                self.timeline.ended(run.name, run.number + 1, run.exit_code, run.ended)
        self.timeline.job_end(result.outcome, result.status, seconds)
        ev.succeeded = result.outcome == SUCCEEDED
        ev.outcome, ev.reason, ev.ended_by, ev.seconds = (
            result.outcome,
            result.reason,
            ended_by,
            seconds,
        )

    def unwatch(self) -> None:
        """Once every run has ended: the last of what they did, then no more watching."""
        if self._watcher is not None:
            self._evidence.not_checked.extend(self._watcher.stop())
            self._watcher = None

    def new(
        self, name: str, runs: list[Run], env: dict[str, str], after_kill: str | None
    ) -> str | None:
        """Record the next run of replica `name` (after `runs`), give it its disk and probe in
        `env`; its working folder (None: vtrain's). `after_kill`: the --kill it follows."""
        try:
            return self._new(name, runs, env, after_kill)
        except OSError as e:
            raise LaunchError(
                f"cannot prepare {name}'s own disk ({e.strerror or e})",
                source="--output-dir",
                value=self._output_dir,
                expected="a folder this user can write (or --shared-disk)",
                hint=hint_for(e),
            ) from None

    def _new(
        self, name: str, runs: list[Run], env: dict[str, str], after_kill: str | None
    ) -> str | None:
        number = len(runs)
        folder = os.path.join(self._trial_dir, DISKS_FOLDER, name)
        disk = None if self._disks is None else self._disks.prepare(name, number)
        if disk is None:
            os.makedirs(folder, exist_ok=True)
        kill = after_kill if number else None
        run = Run(name, number, disk, os.path.join(folder, f"run-{number}.record"), kill)
        run.started = time.time()
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
        self.timeline.give(env, name, number + 1)
        env["VTRAIN_LOCAL_WATCH"] = self._evidence.model_dir
        runs.append(run)
        self._evidence.runs.append(run)
        return None if disk is None else disk.work


class Unrecorded:
    """Where runs go when no verdict is wanted: nowhere."""

    def new(self, name: str, runs: list[Run], env: dict[str, str], after_kill: str | None) -> None:
        return None

    def watch(self, keeper: int) -> None: ...
    def started(self, runs: list[Run], pid: int) -> None: ...
    def fired(self, kill: str) -> None: ...
    def ended(self, result: JobResult, ended_by: str | None, seconds: float) -> None: ...
    def unwatch(self) -> None: ...


def end_run(runs: list[Run], exit_code: int | None, stream: Stream | None, injected: bool) -> None:
    """What the last of `runs`, which just ended, wrote on its disk, said first and last."""
    if not runs or runs[-1].exit_code is not None:
        return
    run = runs[-1]
    run.exit_code = exit_code if exit_code is not None else -signal.SIGKILL
    run.ended = time.time()
    if stream is not None:
        lines = stream.last_lines()
        run.tail = [b.decode(errors="replace") for b in lines]
        run.head = [b.decode(errors="replace") for b in stream.head]
        if not injected:
            run.refused = refused_arguments(run.exit_code, lines)
    if run.disk is not None:
        with contextlib.suppress(OSError):
            run.written = run.disk.written()
