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
from vtrain.progress.backstop import Backstop, grace
from vtrain.progress.bound import (
    STUCK_EXIT,
    STUCK_PREFIX,
    Facts,
    Settings,
    Stuck,
    bound,
    past,
    stuck,
)
from vtrain.progress.file import Writer
from vtrain.progress.tracker import Tracker, fresh
from vtrain.progress.waits import STANDING, waiting_for
from vtrain.timeline import recorder
from vtrain.timeline.events import FIRST_STEP, STEP
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
        self._unjudged = False
        self._signature: int | None = None
        self._since = time.monotonic()
        self._recorded: int | None = None
        self._backstop = Backstop.create() if settings.on else None
        self._backstop_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="vtrain-watchdog", daemon=True)

    def start(self) -> None:
        """Begin watching (the thread is a daemon: it never holds the process up)."""
        self._arm(time.monotonic())  # before the first look: the script may hold the GIL at once
        self._thread.start()

    def stop(self) -> None:
        """Stop watching: the trainer is done (the progress file says so)."""
        self.tracker.done = True
        self._stop.set()
        self._disarm()  # now: what the process does after its training is no step
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(2 * TICK)

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            self.look(time.monotonic())
        self._disarm()
        self._write(time.monotonic())
        if self._writer is not None:
            self._writer.close()

    def look(self, now: float) -> None:
        """One look: write the progress file, and end the process if it is stuck."""
        try:
            self._look(now)
        except Exception as e:  # never left dead with the backstop armed: it would fire
            self._disarm()
            self._stop.set()
            log.warning(f"vtrain: the watchdog stopped ({type(e).__name__}: {e}); not watched")

    def _look(self, now: float) -> None:
        facts = self.tracker.facts(now, still=self._still(now))
        quiet = facts.last is None or now - facts.last > QUIET
        waiting = self._waiting() if quiet and facts.marks else None
        self._write(now, waiting)
        if not self.settings.on or self._stop.is_set():
            return
        self._arm(now, facts)
        found = stuck(facts, self.settings)
        if found is None:
            if facts.marks == 0 and not self._unjudged and past(facts, self.settings):
                self._unjudged = True  # said once: it moves, but marks no step
                log.warning(unjudged_line(now - facts.started))
            return
        with self._backstop_lock:
            if self._stop.is_set():  # the trainer closed its handle meanwhile
                return
        self._fire(found, waiting if waiting is not None else self._waiting())

    def _still(self, now: float) -> float:
        """Seconds the main thread's stack has stood still: the same frames and lines, or the
        same wait for a peer (`waits.STANDING`), however its loop polls."""
        frame = sys._current_frames().get(self._main or 0)
        places, names = [], []
        while frame is not None:
            places.append((frame.f_code.co_filename, frame.f_lineno))
            names.append((frame.f_code.co_filename, frame.f_code.co_name))
            frame = frame.f_back
        standing = waiting_for(names[::-1])
        signature = hash(standing if standing in STANDING else tuple(places))
        if signature != self._signature:
            self._signature, self._since = signature, now
        return now - self._since

    def _arm(self, now: float, facts: Facts | None = None) -> None:
        """Set the backstop's timer to the bound's end (or now, past it), plus its grace:
        it fires only when this thread has not looked for that long (see backstop.py)."""
        since, seconds, _ = bound(facts or self.tracker.facts(now), self.settings)
        with self._backstop_lock:
            if self._backstop is not None and not self._stop.is_set():
                self._backstop.arm(max(since + seconds, now) + grace(seconds) - now)

    def _disarm(self) -> None:
        """Remove the backstop's timer, for good."""
        with self._backstop_lock:
            if self._backstop is not None:
                self._backstop.close()
                self._backstop = None

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
        self._record(now)
        if self._writer is not None:
            try:
                self._writer.write(self.tracker.snapshot(now, waiting))
            except OSError:
                self._writer = None  # the rehearsal's folder is gone: it has ended

    def _record(self, now: float) -> None:
        """The timeline's steps: the first one's end, then the step reached, at most each look."""
        tracker, wall = self.tracker, time.time()
        if tracker.first is not None and self._recorded is None:
            at, step = tracker.first
            recorder().record(FIRST_STEP, t=wall - (now - at), step=step)
            self._recorded = step
        if tracker.step is not None and tracker.step != self._recorded:
            self._recorded = tracker.step
            recorder().record(STEP, step=tracker.step)

    def _fire(self, found: Stuck, waiting: str | None) -> None:
        # The stacks first, the line last: the last line of a failed process is its reason,
        # as a traceback's exception line is, and the platform's log view shows it.
        try:
            sys.stderr.flush()
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            sys.stderr.flush()
            log.error(stuck_line(found, waiting, self.tracker.step))
        finally:
            os._exit(STUCK_EXIT)


def stuck_line(found: Stuck, waiting: str | None, step: int | None) -> str:
    """The one line a stuck trainer says after its stacks."""
    where = "" if step is None else f" after step {step}"
    what = f"waiting for {waiting}" if waiting else "where its stack above shows"
    return (
        f"{STUCK_PREFIX}no progress for {found.silent:.0f} s{where}, {what} "
        f"(bound: {found.why}); every thread's stack is above it in its log; exit "
        f"{STUCK_EXIT} so that the platform restarts it"
    )


def unjudged_line(silent: float) -> str:
    """Said once by a trainer that has marked no step past its first-step allowance."""
    return (
        f"vtrain: no step marked in {silent:.0f} s, and the main thread is moving: the "
        "watchdog cannot tell a hang from work it does not see, so it judges this trainer "
        "only if its stack stands still; call handle.step() once a step (or use the "
        "plugin's callbacks) to have it watched"
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
    _running = Watchdog(fresh(), settings, path)
    _running.start()
    _at_exit()
    return _running


def _at_exit() -> None:
    """Stop watching as the script ends, before threads are joined: what it waits for then
    (a last save, a pool's shutdown) is no step, and a timer left armed would fire."""
    try:
        register = threading._register_atexit  # type: ignore[attr-defined]
    except AttributeError:  # threads are joined before atexit there
        import atexit

        atexit.register(unwatch)
    else:
        register(unwatch)


def unwatch() -> None:
    """The trainer is done: stop its watchdog (a no-op when none runs)."""
    global _running
    if _running is not None and _running.tracker.pid == os.getpid():
        _running.stop()
    _running = None
