"""The watchdog: a thread in each trainer that ends it when it makes no progress, and says why.

Once a second it reads the trainer's `Tracker`, writes the progress file where
`vtrain local run` named one, and asks `vtrain.progress.bound.stuck`. A stuck
trainer writes every thread's Python stack to stderr (faulthandler's dump, which a
C extension's own frames do not reach), one line that says what it waited for and
for how long, and exits STUCK_EXIT. The platform restarts it (or, with
restartJobOnWorkerRestart, the whole job), and it resumes from its last commit.

Nothing is sent to the peers: a collective that hangs hangs on every member that
is alive, so each one's own watchdog fires, a few seconds apart.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import time
from collections.abc import Mapping

from vtrain.log import logger
from vtrain.progress.bound import STUCK_EXIT, STUCK_PREFIX, Settings, Stuck, stuck
from vtrain.progress.file import Writer
from vtrain.progress.tracker import Tracker, tracker
from vtrain.progress.waits import waiting_for
from vtrain.variables import PROGRESS_FILE

TICK = 1.0
"""Seconds between the watchdog's looks: its cost is one look, its delay at most this."""
QUIET = 2.0
"""Seconds without progress after which the progress file says what the trainer waits for."""

log = logger(__name__)

_running: Watchdog | None = None


class Watchdog:
    """The thread that watches one process's tracker."""

    def __init__(self, progress: Tracker, settings: Settings, path: str | None) -> None:
        self.tracker = progress
        self.settings = settings
        self._writer = None if path is None else _writer(path)
        self._stop = threading.Event()
        self._main = threading.main_thread().ident
        self._thread = threading.Thread(target=self._run, name="vtrain-watchdog", daemon=True)

    def start(self) -> None:
        """Begin watching (the thread is a daemon: it never holds the process up)."""
        self._thread.start()

    def stop(self) -> None:
        """Stop watching: the trainer is done (the progress file says so)."""
        self.tracker.done = True
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(2 * TICK)

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            self.look(time.monotonic())
        self._write(time.monotonic())
        if self._writer is not None:
            self._writer.close()

    def look(self, now: float) -> None:
        """One look: write the progress file, and end the process if it is stuck."""
        facts = self.tracker.facts(now)
        quiet = facts.last is None or now - facts.last > QUIET
        waiting = self._waiting() if quiet and facts.marks else None
        self._write(now, waiting)
        if not self.settings.on or self._stop.is_set():
            return
        found = stuck(facts, self.settings)
        if found is not None:
            self._fire(found, waiting if waiting is not None else self._waiting())

    def _waiting(self) -> str | None:
        """What the main thread waits for: what the loop said, else where its stack stands."""
        said = self.tracker.what
        if said is not None:
            return said
        frame = sys._current_frames().get(self._main or 0)
        frames = []
        while frame is not None:
            frames.append((frame.f_code.co_filename, frame.f_code.co_name))
            frame = frame.f_back
        return waiting_for(frames[::-1])

    def _write(self, now: float, waiting: str | None = None) -> None:
        if self._writer is not None:
            try:
                self._writer.write(self.tracker.snapshot(now, waiting))
            except OSError:
                self._writer = None  # the rehearsal's folder is gone: it has ended

    def _fire(self, found: Stuck, waiting: str | None) -> None:
        log.error(stuck_line(found, waiting, self.tracker.step))
        try:
            sys.stderr.flush()
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            sys.stderr.flush()
        finally:
            os._exit(STUCK_EXIT)


def stuck_line(found: Stuck, waiting: str | None, step: int | None) -> str:
    """The one line a stuck trainer says before its stacks."""
    where = "" if step is None else f" after step {step}"
    what = f"waiting for {waiting}" if waiting else "where its stack below shows"
    return (
        f"{STUCK_PREFIX}no progress for {found.silent:.0f} s{where}, {what} "
        f"(bound: {found.why}); every thread's stack follows in its log, then exit "
        f"{STUCK_EXIT} so that the platform restarts it"
    )


def _writer(path: str) -> Writer | None:
    try:
        return Writer(path)
    except OSError as e:
        log.warning(f"vtrain: cannot write the progress file {path}: {e.strerror or e}")
        return None


def watch(environ: Mapping[str, str], *, launched: bool) -> Watchdog | None:
    """Start this process's watchdog (once), as `environ` sets it; None when nothing watches.

    `launched`: a platform or a launcher runs the job (the watchdog's default is on).
    """
    global _running
    if _running is not None and _running.tracker.pid == os.getpid():
        return _running
    settings = Settings.from_env(environ, launched=launched)
    path = environ.get(PROGRESS_FILE) or None
    if not settings.on and path is None:
        return None
    _running = Watchdog(tracker(), settings, path)
    _running.start()
    return _running


def unwatch() -> None:
    """The trainer is done: stop its watchdog (a no-op when none runs)."""
    global _running
    if _running is not None and _running.tracker.pid == os.getpid():
        _running.stop()
    _running = None
