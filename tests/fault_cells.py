"""The fault matrix's cells: a job under `vtrain local run --kill`, watched line by line.

Each replica runs its example under tests/<framework>/scripts/ticking.py, which
prints `vtrain-start TIME` as the process starts and `vtrain-tick K TIME` after its
K-th step. With the step a run started from (the example's own resume line), the
kill's line and the preemption's `committed step N` line, a cell gives its figures:

- recover: seconds from the kill to the chief's first step after the resume;
- redone: steps trained again (the furthest step reached before the restart, less
  the step resumed from);
- commit: seconds from a SIGTERM to the `committed step N` line;
- detect: seconds from a freeze (SIGSTOP) to the first peer's end: its watchdog's line,
  or its framework's own failure (TensorFlow's coordination service has a heartbeat);
- ended: seconds from the kill to the job's end.

Each framework's tests/<framework>/test_fault_matrix.py and bench/faults.py run the
cells; `check_frozen` is what every frozen cell asserts.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cluster_run import clean_env

from vtrain.progress.bound import BACKSTOP_SIGNAL

# fault -> the --kill argument (who, and the signal: :TERM is a preemption notice).
FAULTS = {
    "kill worker": "worker:0@{at}",
    "kill chief": "chief:0@{at}",
    "preempt worker": "worker:0@{at}:TERM",
    "preempt chief": "chief:0@{at}:TERM",
}
# A machine that hangs (SIGSTOP): it stays frozen; its peers' watchdogs end them.
FREEZES = {
    "freeze worker": "worker:0@{at}:STOP",
    "freeze chief": "chief:0@{at}:STOP",
}
STUCK = "vtrain: stuck: "
# policy -> vtrain local run's options: Vertex's default restarts the failed replica alone.
POLICIES = {"replica": [], "job": ["--restart-job-on-worker-restart"]}
COMMITTED = "preempted (SIGTERM): committed step "
_LINE = re.compile(r"^(?P<who>[\w-]+)\s*\| (?P<text>.*)$")
_ENDED = re.compile(r"^[\w-]+ (was stuck|exited with) ")


@dataclass
class Life:
    """One process of one replica: the step it started from, and its steps (step, time)."""

    started: float
    base: int = 0
    ticks: list[tuple[int, float]] = field(default_factory=list)


@dataclass
class CellRun:
    """A finished (or stopped) cell: what vtrain said, each replica's lives, and the times."""

    returncode: int | None
    output: str
    launched: float
    lives: dict[str, list[Life]]
    killed_at: float | None = None
    committed_at: float | None = None
    committed_step: int | None = None
    timed_out: bool = False
    stuck_at: float | None = None
    """When the first watchdog said its trainer was stuck."""
    failed_at: float | None = None
    """When vtrain first said, after the kill, that a replica was stuck or exited."""
    ended_at: float | None = None
    """When `vtrain local run` ended (or was stopped, past the timeout)."""
    lead: str = "chief-0"
    """The replica whose lives give the figures: the chief, or the trainer that leads."""

    def first_step(self) -> float | None:
        """Seconds from the launch to the chief's first step (the cold start, uninterrupted)."""
        ticks = [t for life in self.lives.get(self.lead, []) for _, t in life.ticks]
        return min(ticks) - self.launched if ticks else None

    def trained_before_kill(self) -> bool:
        """Whether the lead's first life stepped at all: under load the kill can come first
        (a cold start past the kill's time), and then the job rightly starts from nothing."""
        return bool(self.lives[self.lead][0].ticks)

    def resumed(self) -> int:
        """The step the chief's last life started from."""
        return self.lives[self.lead][-1].base

    def recover(self) -> float | None:
        """Seconds from the kill to the chief's first step after its restart (the first life
        after the first that stepped: a later restart may find nothing left to train)."""
        lives = self.lives.get(self.lead, [])
        stepped = [life for life in lives[1:] if life.ticks]
        if self.killed_at is None or not stepped:
            return None
        return stepped[0].ticks[0][1] - self.killed_at

    def redone(self) -> int | None:
        """Steps reached before the restart that the resumed job trained again."""
        if len(self.lives.get(self.lead, [])) < 2:
            return None
        reached = [
            step for lives in self.lives.values() for life in lives[:-1] for step, _ in life.ticks
        ]
        return max(0, max(reached, default=0) - self.resumed())

    def detect(self) -> float | None:
        """Seconds from a freeze to the first peer's end: its watchdog's line, or its failure."""
        found = [t for t in (self.stuck_at, self.failed_at) if t is not None]
        if self.killed_at is None or not found:
            return None
        return min(found) - self.killed_at

    def ended(self) -> float | None:
        """Seconds from the kill to the job's end: its resumed finish, or its stop."""
        if self.killed_at is None or self.ended_at is None:
            return None
        return self.ended_at - self.killed_at

    def commit(self) -> float | None:
        """Seconds from the SIGTERM to its `committed step N` line."""
        if self.killed_at is None or self.committed_at is None:
            return None
        return self.committed_at - self.killed_at

    def shown(self) -> str:
        """The output for an assertion's message: what vtrain's supervisor said (every restart
        and its cause), then the output's last 6000 characters, without tick lines."""
        lines = [line for line in self.output.splitlines(True) if "| vtrain-tick " not in line]
        said = [line for line in lines if line.startswith("vtrain ")]
        return "".join(said)[-3000:] + "\n[...]\n" + "".join(lines)[-6000:]

    def figures(self) -> str:
        """One line: recover, redone, commit (`-` where a figure does not apply)."""

        def show(value: float | None, unit: str) -> str:
            return "-" if value is None else f"{value:.1f} {unit}".replace(".0 steps", " steps")

        redone = self.redone()
        return (
            f"detect {show(self.detect(), 's')}, "
            f"recover {show(self.recover(), 's')}, "
            f"redone {'-' if redone is None else f'{redone} steps'}, "
            f"commit {show(self.commit(), 's')}"
        )


def run_cell(
    out: Path,
    options: list[str],
    command: list[str],
    *,
    start_line: str,
    timeout: float,
    lead: str = "chief-0",
    **env: str,
) -> CellRun:
    """`vtrain local run OPTIONS -- python COMMAND`, read as it runs; stopped after `timeout`.

    `start_line` is the regex of the example's line that says which step a process
    starts from (group 1); `lead` the replica whose lives give the figures.
    """
    started = re.compile(start_line)
    launched = time.time()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--output-dir",
            str(out),
            *options,
            "--",
            sys.executable,
            *command,
        ],
        env=clean_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # so that a cell that overruns is stopped whole
    )
    run = CellRun(None, "", launched, {}, lead=lead)
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            now = time.time()
            lines.append(line)
            match = _LINE.match(line.rstrip("\n"))
            if not match:
                continue
            who, text = match["who"], match["text"]
            if (
                who == "vtrain"
                and text.startswith("--kill ")
                and (" sending " in text or " freezing " in text)
            ):
                run.killed_at = run.killed_at or now
            elif text.startswith(STUCK) and run.stuck_at is None:
                run.stuck_at = now
            elif who == "vtrain" and run.killed_at and not run.failed_at and _ENDED.match(text):
                run.failed_at = now
            elif text.startswith("vtrain-start "):
                run.lives.setdefault(who, []).append(Life(float(text.split()[1])))
            elif text.startswith("vtrain-tick ") and run.lives.get(who):
                life = run.lives[who][-1]
                _, count, at = text.split()
                life.ticks.append((life.base + int(count), float(at)))
            elif COMMITTED in text and run.committed_at is None:
                run.committed_at = now
                run.committed_step = int(text.split(COMMITTED)[1].split()[0])
            elif (found := started.search(text)) and run.lives.get(who):
                run.lives[who][-1].base = int(found[1])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        run.returncode = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        run.timed_out = True
        os.killpg(proc.pid, signal.SIGINT)  # vtrain stops every replica on Ctrl-C
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    run.ended_at = time.time()
    reader.join(timeout=10)
    run.output = "".join(lines)
    return run


def check_frozen(
    run: CellRun,
    policy: str,
    *,
    timeout: float,
    detect_within: float,
    every: int,
    settle_within: float,
    watchdog: bool = True,
) -> None:
    """What a frozen cell must show: found by a peer's watchdog within `detect_within` seconds
    of the freeze; then, as the platform would, the whole job restarts and resumes from a
    commit (a multiple of `every` steps), or the lone restarts find the peer hung and the
    job stops with exit 75 and one line that says what to do; either within
    `settle_within` seconds of the freeze (the resumed lead's first step, or the stop).
    `watchdog`: the peer's watchdog must be what found it (False: the framework may first)."""
    assert not run.timed_out, f"hung past {timeout} s:\n{run.shown()}"
    assert run.killed_at is not None and "nothing to kill" not in run.output, run.shown()
    detect = run.detect()
    assert detect is not None and detect < detect_within, (detect, run.shown())
    if watchdog:
        assert "was stuck (no progress for " in run.output, run.shown()
    if policy == "job":
        assert run.returncode == 0, run.shown()
        assert "restarting every replica" in run.output, run.shown()
        assert len(run.lives[run.lead]) >= 2, run.shown()
        if run.trained_before_kill():
            assert run.resumed() % every == 0 and run.resumed() > 0, run.shown()
        settled = run.recover()
    else:
        # 75: its watchdog; 128 + the backstop's signal: stuck where that thread cannot run.
        assert run.returncode in (75, 128 + BACKSTOP_SIGNAL), run.shown()
        [reason] = [line for line in run.output.splitlines() if line.startswith("job failed")]
        assert "--restart-job-on-worker-restart" in reason, reason
        settled = run.ended()
    assert settled is not None and settled < settle_within, (settled, run.shown())
