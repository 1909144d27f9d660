"""Signals to vtrain itself (Ctrl-C, a `kill`, a closed terminal): noted, and acted on by the loop.

The handler only notes the signal and writes a byte to a self-pipe that the
supervisor's selector watches: the loop acts on it, never in the middle of a Popen.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
WAKE = "wake"
"""The selector's data for the self-pipe."""


class Interrupts:
    """The signals vtrain received and has not acted on yet, and the pipe that says so."""

    def __init__(self, sel: selectors.BaseSelector) -> None:
        self._sel = sel
        self._received: list[int] = []
        self._r, self._w = os.pipe()
        os.set_blocking(self._r, False)
        os.set_blocking(self._w, False)
        sel.register(self._r, selectors.EVENT_READ, WAKE)

    def catch(self) -> Callable[[], None]:
        """Handle STOP_SIGNALS from now; returns what gives the previous handlers back."""

        def handler(signum: int, frame: object) -> None:
            self._received.append(signum)
            with contextlib.suppress(OSError):  # a full pipe already says "wake up"
                os.write(self._w, b"\0")

        try:
            previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
        except ValueError:  # only the main thread may handle signals; the caller does
            return lambda: None

        def restore() -> None:
            for sig, old in previous.items():
                signal.signal(sig, old)

        return restore

    def received(self) -> list[signal.Signals]:
        """The signals received since the last look, in order."""
        try:
            while os.read(self._r, 512):
                pass
        except BlockingIOError:
            pass
        got, self._received = self._received, []
        return [signal.Signals(s) for s in got]

    def close(self) -> None:
        """Close the pipe (the selector is closed by its owner)."""
        os.close(self._r)
        os.close(self._w)
