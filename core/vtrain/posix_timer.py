"""POSIX timers through ctypes (Linux): deadlines the kernel keeps, which need no Python thread.

A Python timer thread cannot run while the main thread is stuck in C code that
holds the GIL. Two deadlines must hold even then:

- the watchdog's backstop (`vtrain.progress.backstop`): a signal at the deadline;
- the preemption's grace (`vtrain.preemption`): at its end the process exits 143
  before the platform's SIGKILL. TensorFlow was seen to stall so as `fit` unwound
  after the SIGTERM save (deleting a traced function), and the platform's SIGKILL
  came instead of the status that says "preempted, restart me".

The second is a SIGEV_THREAD timer whose function is libc's own `_exit`, given the
status as the timer's value: glibc's timer thread calls it, and no Python runs. The
value is a `union sigval`, which the Linux ABIs of x86-64 and aarch64 pass in the
first integer register, where `_exit` reads its int; elsewhere there is no such
timer and the caller keeps a thread.

A timer is not inherited by fork: a forked child never fires its parent's.
"""

from __future__ import annotations

import ctypes
import platform
import sys

_CLOCK_MONOTONIC = 1
_SIGEV_SIGNAL = 0
_SIGEV_THREAD = 2
_LONGEST = 365 * 86400.0
"""The furthest a timer is set: a deadline of days is as good as none, and fits every field."""
_EXIT_ABIS = ("x86_64", "aarch64")
"""Machines whose ABI passes a `union sigval` where `_exit` reads its int."""


class _SigEvent(ctypes.Structure):
    # struct sigevent on Linux: a union sigval, two ints, then a 48-byte union whose
    # SIGEV_THREAD member is the function and its pthread attributes (64 bytes in all).
    _fields_ = [
        ("value", ctypes.c_void_p),
        ("signo", ctypes.c_int),
        ("notify", ctypes.c_int),
        ("function", ctypes.c_void_p),
        ("attributes", ctypes.c_void_p),
        ("_pad", ctypes.c_int * 8),
    ]


class _TimeSpec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


class _ITimerSpec(ctypes.Structure):
    _fields_ = [("interval", _TimeSpec), ("value", _TimeSpec)]


def _libc() -> ctypes.CDLL:
    """The C library that has timer_create; OSError where this system has none."""
    if not sys.platform.startswith("linux"):
        raise OSError(f"no POSIX timers through ctypes on {sys.platform}")
    libc = ctypes.CDLL(None, use_errno=True)  # glibc 2.34+: timer_* are in libc itself
    if not hasattr(libc, "timer_create"):
        libc = ctypes.CDLL("librt.so.1", use_errno=True)
    return libc


class PosixTimer:
    """One kernel timer (CLOCK_MONOTONIC); `arm(seconds)` moves it, `cancel()` removes it."""

    def __init__(self, event: _SigEvent) -> None:
        """Create the timer for `event` (not yet armed); OSError where the kernel refuses."""
        self._libc = _libc()
        self._timer = ctypes.c_void_p()
        # glibc copies what `event` says: it need not outlive this call.
        failed = self._libc.timer_create(
            _CLOCK_MONOTONIC, ctypes.byref(event), ctypes.byref(self._timer)
        )
        if failed:
            raise OSError(ctypes.get_errno(), "timer_create failed")
        self._live = True

    def arm(self, seconds: float) -> None:
        """Fire in `seconds` (from now, at most a year), unless armed again or cancelled before;
        an OSError where the kernel refuses (the old deadline would stand)."""
        seconds = min(max(seconds, 0.001), _LONGEST)
        whole = int(seconds)
        spec = _ITimerSpec(value=_TimeSpec(whole, int((seconds - whole) * 1e9)))
        if self._libc.timer_settime(self._timer, 0, ctypes.byref(spec), None):
            raise OSError(ctypes.get_errno(), "timer_settime failed")

    def cancel(self) -> None:
        """Remove the timer: it never fires after this returns (a second call does nothing)."""
        if self._live:
            self._live = False
            self._libc.timer_delete(self._timer)


def signal_timer(signo: int) -> PosixTimer:
    """A timer that sends this process `signo`; OSError where there are none."""
    return PosixTimer(_SigEvent(signo=signo, notify=_SIGEV_SIGNAL))


def exit_timer(status: int) -> PosixTimer:
    """A timer whose own C thread calls `_exit(status)`; OSError where there is none."""
    if platform.machine() not in _EXIT_ABIS:
        raise OSError(f"no exit timer on {platform.machine()}")
    address = ctypes.cast(_libc()._exit, ctypes.c_void_p).value
    return PosixTimer(_SigEvent(value=status, notify=_SIGEV_THREAD, function=address))
