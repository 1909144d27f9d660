"""Opt-in SIGTERM handling: save once more within a grace budget, then exit as the platform expects.

Spot preemption, a VM restart and Kubernetes all send SIGTERM and, a grace
period later (30 s by default on GKE and Vertex), SIGKILL. Python's default is
to die at once, mid-step. With a `PreemptionHandler` installed the signal only
sets a flag: the training loop sees it, saves one last checkpoint and leaves.

The exit status is 143 (128 + SIGTERM), never 0: Vertex AI ends the whole job
successfully when the primary replica exits 0, which would turn a preemption
into a "finished" job with a half-trained model. A non-zero status makes the
platform restart the replica, and the restarted script resumes from the
checkpoint. (The status is set by exiting, not by re-raising the signal: as
PID 1 in a container the default SIGTERM action is ignored.)

    with PreemptionHandler(grace=20) as preempted:
        for step in range(start, steps):
            train_one_step()
            if preempted or step % 1000 == 0:
                manager.save(step, state())
            preempted.exit_if_requested()
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from types import FrameType, TracebackType
from typing import Any, NoReturn

from vtrain.errors import UsageError, positive_seconds
from vtrain.posix_timer import PosixTimer, exit_timer

EXIT_STATUS = 128 + signal.SIGTERM
DEFAULT_GRACE = 25.0
"""Seconds to finish after the signal: under the 30 s platforms wait before SIGKILL."""

Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None
COMMITTED = "vtrain: preempted (SIGTERM): committed step "
"""How the line starts that a replica prints once its SIGTERM save is committed.

`vtrain local run` reads the step from it for the job's summary."""


def committed_line(step: int, detail: str = "") -> str:
    """The line to print once the SIGTERM save of `step` is committed (detail: where, how long)."""
    return f"{COMMITTED}{step}" + (f" {detail}" if detail else "")


def committed_step(lines: Iterable[bytes]) -> int | None:
    """The step of the last `committed_line` among a replica's output lines, or None."""
    marker = COMMITTED.encode()
    found = None
    for line in lines:
        at = line.find(marker)
        if at >= 0:
            digits = line[at + len(marker) :].split(b" ", 1)[0]
            if digits.isdigit():
                found = int(digits)
    return found


class PreemptionHandler:
    """Turns SIGTERM into a flag the training loop checks, with a deadline to exit by."""

    def __init__(
        self,
        *,
        grace: float = DEFAULT_GRACE,
        exit_status: int = EXIT_STATUS,
        signals: Iterable[int] = (signal.SIGTERM,),
        stuck_after: float | None = None,
    ) -> None:
        """Catch `signals` (SIGTERM) once installed; exit with `exit_status` (143) at the
        latest `grace` seconds after the first, or at once on a second.

        `stuck_after`: exit at once, without a save, when the signal's handler has not
        run this many seconds after it came (see `_StuckWatch`); None: wait for the loop.
        A `grace` or `stuck_after` that is not seconds > 0, or an `exit_status` that is
        not an int, raises `UsageError`.
        """
        if stuck_after is not None:
            positive_seconds(
                stuck_after, "stuck_after", "not a time to wait", "seconds > 0, or None"
            )
        positive_seconds(grace, "grace", "not a grace period")
        if isinstance(exit_status, bool) or not isinstance(exit_status, int):
            raise UsageError(
                "not an exit status",
                source="exit_status",
                value=exit_status,
                expected="an int, 143 by default",
            )
        self.grace = float(grace)
        self.exit_status = exit_status
        self.signals = tuple(signals)
        self._requested_at: float | None = None
        self._previous: dict[int, Handler] = {}
        self._timer: PosixTimer | threading.Timer | None = None
        self.stuck_after = None if stuck_after is None else float(stuck_after)
        self._stuck: _StuckWatch | None = None

    @property
    def requested(self) -> bool:
        """True once a signal asked this process to stop."""
        return self._requested_at is not None

    def __bool__(self) -> bool:
        return self.requested

    def time_left(self) -> float | None:
        """Seconds left of the grace budget, or None while no signal has come."""
        if self._requested_at is None:
            return None
        return max(0.0, self.grace - (time.monotonic() - self._requested_at))

    def install(self) -> PreemptionHandler:
        """Catch the signals (call from the main thread); returns self."""
        if threading.current_thread() is not threading.main_thread():
            raise UsageError(
                "signal handlers can only be installed from the main thread",
                source="PreemptionHandler.install",
                hint="create the handler at the top of the training script",
            )
        for signum in self.signals:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        if self.stuck_after is not None and self._stuck is None:
            self._stuck = _StuckWatch(self, self.stuck_after)
        return self

    def uninstall(self) -> None:
        """Restore the previous handlers and stop the deadline."""
        self._restore_handlers()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _restore_handlers(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        if self._stuck is not None:
            self._stuck.close()
            self._stuck = None

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._requested_at is not None:
            # A second signal: the sender is out of patience, and so are we.
            os._exit(self.exit_status)
        self._requested_at = time.monotonic()
        from vtrain.timeline import recorder
        from vtrain.timeline.events import SIGTERM

        recorder().record(SIGTERM)
        # The deadline is kept outside the loop: a loop stuck in one long step still exits
        # with the right status before SIGKILL arrives, instead of being killed mid-write.
        self._timer = _deadline(self.grace, self.exit_status)

    def exit(self) -> NoReturn:
        """Leave now with the exit status the platform expects after a preemption.

        A checkpoint still being saved in the background is waited for first,
        within what is left of the grace budget; a failed one is printed, and the
        status stays this one (the platform restarts the replica either way).
        """
        from vtrain.checkpoints.background import settle

        settle(self.time_left(), status=self.exit_status)
        if self._timer is not None:
            # Leaving is bounded by the deadline now, which exits with this status: a framework's
            # teardown that hangs (TensorFlow's, deleting a variable on a parameter server) is
            # no stuck step, for the watchdog to end with exit 75 before the deadline.
            from vtrain.progress.watchdog import unwatch

            unwatch()
        sys.stdout.flush()
        sys.stderr.flush()
        raise SystemExit(self.exit_status)

    def exit_if_requested(self) -> None:
        """`exit()` if a signal came; otherwise return at once."""
        if self.requested:
            self.exit()

    def __enter__(self) -> PreemptionHandler:
        return self.install()

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self.requested:
            self.uninstall()
            return
        # The deadline stays armed: interpreter shutdown can hang on a framework's threads.
        self._restore_handlers()
        if kind is None:
            # A loop that broke out on the signal must not fall through to a clean exit 0.
            self.exit()


def _deadline(seconds: float, status: int) -> PosixTimer | threading.Timer:
    """Exit `status` in `seconds`, unless cancelled: a kernel timer, which holds where the main
    thread is stuck in C code that holds the GIL (`vtrain.posix_timer`); else a thread."""
    try:
        timer = exit_timer(status)
        timer.arm(seconds)  # unarmed, a timer that failed here never fires
        return timer
    except (OSError, AttributeError):
        thread = threading.Timer(seconds, os._exit, args=(status,))
        thread.daemon = True
        thread.start()
        return thread


# -- the process's own watch, which every handle's `preempted` reads ------------------------

_watch: list[PreemptionHandler] = []
"""The handler `watch` installed, while installed (signal handlers are the process's)."""


def watch() -> PreemptionHandler | None:
    """The process's SIGTERM flag, installed on first call; None where it cannot be.

    Installed from the main thread only, and not over a handler the script set
    itself (Lightning's, its own `PreemptionHandler`): that one keeps SIGTERM.
    """
    if not _watch:
        if (
            threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        ):
            return None
        _watch.append(PreemptionHandler().install())
    return _watch[0]


def requested() -> bool:
    """True once SIGTERM came to this process since `watch` installed its flag."""
    return bool(_watch) and _watch[0].requested


def unwatch() -> None:
    """SIGTERM ends the process at once again (no save is coming), unless it came already."""
    if _watch and not _watch[0].requested:
        _watch.pop().uninstall()


def leave() -> NoReturn:
    """Exit 143 after a preemption's commit: this process's signal or another trainer's.

    Pending background saves are waited for, within the grace left where the signal came here.
    """
    if requested():
        _watch[0].exit()
    unwatch()
    from vtrain.checkpoints.background import settle

    settle(None, status=EXIT_STATUS)
    sys.stdout.flush()
    sys.stderr.flush()
    raise SystemExit(EXIT_STATUS)


class _StuckWatch:
    """Ends the process when a signal's handler cannot run: the main thread is stuck in native code.

    Python runs a signal handler only when the main thread is back in the
    interpreter. A main thread blocked in native code that waits for a peer that
    is gone (ps-lite's push: the servers wait for every worker's) never comes
    back: the flag is never set, the deadline never armed, and the process
    waits for SIGKILL (30 s on the platforms) before the job can restart. The
    interpreter's C-level handler still writes the signal's number to the
    wakeup fd at once; this thread reads it, and if the handler has not run
    `after` seconds later, leaves with the handler's exit status, saving nothing.

    The wakeup fd is the process's one: what it held before still gets every byte.
    """

    def __init__(self, handler: PreemptionHandler, after: float) -> None:
        self._handler, self._after = handler, after
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._previous = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        threading.Thread(target=self._watch, name="vtrain-stuck-watch", daemon=True).start()

    def _watch(self) -> None:
        numbers = {int(s) for s in self._handler.signals}
        try:
            while got := os.read(self._read, 64):  # b"" once `close` closed the other end
                if self._previous >= 0:
                    with contextlib.suppress(OSError):
                        os.write(self._previous, got)
                if numbers.isdisjoint(got):
                    continue
                deadline = time.monotonic() + self._after
                while not self._handler.requested and time.monotonic() < deadline:
                    time.sleep(0.05)
                if not self._handler.requested:
                    os.write(
                        2,
                        (
                            f"vtrain: a stop signal came and the main thread has not left native "
                            f"code for {self._after:g} s (waiting for a peer that is gone?): "
                            f"exiting {self._handler.exit_status} without a save\n"
                        ).encode(),
                    )
                    os._exit(self._handler.exit_status)
        finally:
            os.close(self._read)

    def close(self) -> None:
        """Give the wakeup fd back (from the main thread); the watching thread ends."""
        signal.set_wakeup_fd(self._previous)
        os.close(self._write)
