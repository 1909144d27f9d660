"""The watchdog's backstop: a kernel timer that ends a trainer whose interpreter cannot run.

The watchdog is a Python thread. A framework call that blocks in C code while holding
the GIL (TensorFlow's coordination service, connecting to a peer that hangs) stops
it too, and then nothing would end the trainer. So each look of the watchdog arms a
POSIX timer (CLOCK_MONOTONIC, through ctypes) for the trainer's bound plus a grace.
The watchdog disarms or moves it at its next look; should the timer fire, no Python
code can run, so faulthandler's own C handler for SIGNAL writes every thread's
Python stack and re-raises the signal with its default action: the process ends,
killed by SIGNAL, and the platform restarts it.

Why not faulthandler.dump_traceback_later: its C thread's lock is copied, held, into
a forked child, whose exit then waits for it forever. A POSIX timer is not inherited
by fork; the signal's handler is, and never fires there.
"""

from __future__ import annotations

import ctypes
import faulthandler
import sys

from vtrain.log import logger
from vtrain.progress.bound import BACKSTOP_SIGNAL

SIGNAL = BACKSTOP_SIGNAL


def grace(bound: float) -> float:
    """Seconds past a bound of `bound` seconds the watchdog's thread has to act before the
    timer does: as long as the bound, at least 5 s, at most 30 s."""
    return min(30.0, max(5.0, bound))


_LONGEST = 365 * 86400.0
"""The furthest a timer is set: a bound of days is as good as none, and fits every field."""
_CLOCK_MONOTONIC = 1
_SIGEV_SIGNAL = 0

log = logger(__name__)


class _SigEvent(ctypes.Structure):
    # struct sigevent on Linux: a union sigval, two ints, then a 48-byte union (64 in all).
    _fields_ = [
        ("value", ctypes.c_void_p),
        ("signo", ctypes.c_int),
        ("notify", ctypes.c_int),
        ("_pad", ctypes.c_int * 12),
    ]


class _TimeSpec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


class _ITimerSpec(ctypes.Structure):
    _fields_ = [("interval", _TimeSpec), ("value", _TimeSpec)]


class Backstop:
    """One process's timer; `arm(seconds)` moves it, `close()` removes it."""

    def __init__(self, libc: ctypes.CDLL, timer: ctypes.c_void_p) -> None:
        self._libc = libc
        self._timer = timer

    @classmethod
    def create(cls) -> Backstop | None:
        """The process's backstop; None where the system has no POSIX timers (it says why)."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)  # glibc 2.34+: timer_* are in libc itself
            if not hasattr(libc, "timer_create"):
                libc = ctypes.CDLL("librt.so.1", use_errno=True)
            event = _SigEvent(signo=SIGNAL, notify=_SIGEV_SIGNAL)
            timer = ctypes.c_void_p()
            if libc.timer_create(_CLOCK_MONOTONIC, ctypes.byref(event), ctypes.byref(timer)):
                raise OSError(ctypes.get_errno(), "timer_create failed")
        except (OSError, AttributeError) as e:
            log.warning(
                f"vtrain: the watchdog has no backstop here ({e}): a trainer stuck in C code "
                "that holds the GIL is ended only by the platform's own timeout"
            )
            return None
        faulthandler.register(SIGNAL, file=sys.stderr, all_threads=True, chain=True)
        return cls(libc, timer)

    def arm(self, seconds: float) -> None:
        """Fire in `seconds` (from now, at most a year), unless armed again or closed before;
        an OSError where the kernel refuses (the old deadline would stand)."""
        seconds = min(max(seconds, 0.001), _LONGEST)
        whole = int(seconds)
        spec = _ITimerSpec(value=_TimeSpec(whole, int((seconds - whole) * 1e9)))
        if self._libc.timer_settime(self._timer, 0, ctypes.byref(spec), None):
            raise OSError(ctypes.get_errno(), "timer_settime failed")

    def close(self) -> None:
        """Remove the timer (the signal's handler stays: with no timer, nothing sends it)."""
        self._libc.timer_delete(self._timer)
        faulthandler.unregister(SIGNAL)
