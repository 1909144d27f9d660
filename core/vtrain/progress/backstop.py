"""The watchdog's backstop: a kernel timer that ends a trainer whose interpreter cannot run.

The watchdog is a Python thread. A framework call that blocks in C code while holding
the GIL (TensorFlow's coordination service, connecting to a peer that hangs) stops
it too, and then nothing would end the trainer. So each look of the watchdog arms a
POSIX timer (CLOCK_MONOTONIC, through ctypes) for the trainer's bound plus a grace.
The watchdog disarms or moves it at its next look; should the timer fire, no Python
code can run, so faulthandler's own C handler for SIGNAL writes every thread's
Python stack and re-raises the signal with its default action: the process ends,
killed by SIGNAL, and the platform restarts it.

Where the signal cannot end the process, a second timer does, AFTER_DUMP seconds later:
its own C thread calls `_exit(BACKSTOP_EXIT)` (`vtrain.posix_timer`). That is the
container's PID 1, which the kernel spares any signal it has no handler for: the
stacks were written, and the process went on.

Why not faulthandler.dump_traceback_later: its C thread's lock is copied, held, into
a forked child, whose exit then waits for it forever. A POSIX timer is not inherited
by fork; the signal's handler is, and never fires there.
"""

from __future__ import annotations

import faulthandler
import sys

from vtrain.log import logger
from vtrain.posix_timer import PosixTimer, exit_timer, signal_timer
from vtrain.progress.bound import BACKSTOP_EXIT, BACKSTOP_SIGNAL

SIGNAL = BACKSTOP_SIGNAL
AFTER_DUMP = 2.0
"""Seconds from the signal to the exit timer: faulthandler has written every stack by then."""


def grace(bound: float) -> float:
    """Seconds past a bound of `bound` seconds the watchdog's thread has to act before the
    timer does: as long as the bound, at least 5 s, at most 30 s."""
    return min(30.0, max(5.0, bound))


log = logger(__name__)


class Backstop:
    """One process's timers; `arm(seconds)` moves them, `close()` removes them."""

    def __init__(self, timer: PosixTimer, ender: PosixTimer | None) -> None:
        self._timer = timer
        self._ender = ender

    @classmethod
    def create(cls) -> Backstop | None:
        """The process's backstop; None where the system has no POSIX timers (it says why)."""
        try:
            timer = signal_timer(SIGNAL)
        except (OSError, AttributeError) as e:
            log.warning(
                f"vtrain: the watchdog has no backstop here ({e}): a trainer stuck in C code "
                "that holds the GIL is ended only by the platform's own timeout"
            )
            return None
        try:
            ender = exit_timer(BACKSTOP_EXIT)
        except (OSError, AttributeError):
            ender = None  # the signal alone: it ends every process but a container's PID 1
        faulthandler.register(SIGNAL, file=sys.stderr, all_threads=True, chain=True)
        return cls(timer, ender)

    def arm(self, seconds: float) -> None:
        """Fire in `seconds` (from now, at most a year), unless armed again or closed before;
        an OSError where the kernel refuses (the old deadline would stand)."""
        self._timer.arm(seconds)
        if self._ender is not None:
            self._ender.arm(seconds + AFTER_DUMP)

    def close(self) -> None:
        """Remove the timers (the signal's handler stays: with no timer, nothing sends it)."""
        self._timer.cancel()
        if self._ender is not None:
            self._ender.cancel()
        faulthandler.unregister(SIGNAL)
