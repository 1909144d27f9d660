"""Saves that return at once: a snapshot taken in the call, the write and the commit on a thread.

As in orbax's AsyncCheckpointer and torch.distributed.checkpoint.async_save,
the caller only pays for the copy that makes the payload its own: buffers
nobody else holds are copied (into the previous save's buffers, already in
memory), immutable bytes are not, a writer runs into a staging folder (a
`Snapshot` writer runs later, on the thread). The thread
then writes and commits with the same protocol as a blocking save, so a kill
at any moment leaves either the committed step or no step.

The thread is not a daemon: the interpreter waits for it at exit, and a save
that fails there is logged and fails the process (see "the check at exit"
below); the preemption handler waits for every pending save within its grace
budget.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable

from vtrain.checkpoints.commit import call_writer
from vtrain.checkpoints.layout import TMP_PREFIX, step_folder, token
from vtrain.checkpoints.payload import Payload
from vtrain.errors import CheckpointError, VtrainError, shown
from vtrain.storage.files import os_errors
from vtrain.storage.location import Location
from vtrain.storage.staging import make_staging

_pending: set[PendingSave] = set()
_lock = threading.Lock()


def _own(name: str, view: memoryview, staging: dict[str, bytearray]) -> memoryview:
    # Only a whole `bytes` object is immutable; anything else may change after save returns.
    if type(view.obj) is bytes:
        return view
    # Copied into the buffer the previous save of this file used (it is committed by now):
    # memory touched before copies at memcpy speed, fresh memory page-faults at a fraction
    # of it. As torch.distributed.checkpoint caches its staging buffers, for the same reason.
    buffer = staging.get(name)
    if buffer is None or len(buffer) != view.nbytes:
        buffer = staging[name] = bytearray(view)
    else:
        # Through a memoryview: `bytearray[:] = memoryview` builds a temporary copy first.
        memoryview(buffer)[:] = view
    return memoryview(buffer)


def snapshot(
    payload: Payload, location: Location, step: int, staging: dict[str, bytearray]
) -> Payload:
    """The payload as of now, in memory or in a staging folder no one else writes to.

    `staging` holds the buffers of the previous in-memory snapshot, reused when a
    file keeps its size; the caller must not start a save before the last one ended.
    """
    if payload.writer is None:
        files = {name: _own(name, view, staging) for name, view in payload.files.items()}
        for name in set(staging) - set(files):
            del staging[name]  # a file this checkpoint no longer has
        return Payload(payload.kind, files)
    if payload.deferred:
        return payload
    if location.atomic_rename and location.path is not None:
        # Beside the steps, so the commit is a rename; a kill leaves a leftover that the
        # next run's cleanup removes.
        folder = os.path.join(location.path, f"{TMP_PREFIX}{step_folder(step)}-{token()}")
        with os_errors("stage a checkpoint", location.uri, step_folder(step)):
            os.makedirs(folder)
    else:
        folder = make_staging("stage")  # named for this process: a kill leaves it to the next start
    try:
        call_writer(payload, folder, f"{location.uri}: step {step}")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Payload("directory", staged=folder)


class PendingSave:
    """One save running on its own thread; `join` waits, `error` is what it raised."""

    def __init__(self, step: int, uri: str, work: Callable[[], object]) -> None:
        self.step = step
        self.uri = uri
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), name=f"vtrain-save-{step}")
        _arm_exit_check()
        with _lock:
            _pending.add(self)
        self._thread.start()

    def _run(self, work: Callable[[], object]) -> None:
        try:
            work()
        except BaseException as e:  # kept for wait(): the caller's thread reports it
            self.error = e
            with _lock:
                _unreported.append(self)
        finally:
            with _lock:
                _pending.discard(self)

    @property
    def done(self) -> bool:
        """True once the save committed or failed."""
        return not self._thread.is_alive()

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to `timeout` seconds (None: for good); True when it is done."""
        self._thread.join(timeout)
        return self.done

    def failure(self) -> CheckpointError | None:
        """The failure as a `CheckpointError`, the first time it is asked for; else None.

        Once asked, the exit check no longer reports it: the caller has it to raise.
        """
        with _lock:
            if self not in _unreported:
                return None
            _unreported.remove(self)
        e = self.error
        cause = e.problem if isinstance(e, VtrainError) else str(e) or type(e).__name__
        return CheckpointError(
            f"the background save of step {self.step} failed: {cause}",
            source=self.uri,
            hint="that step was not committed; the steps committed before it are intact",
        )


def wait_all(timeout: float | None = None) -> bool:
    """Wait for every pending save of this process; True when all are done in time."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with _lock:
        pending = list(_pending)
    for save in pending:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not save.join(left):
            return False
    return True


def settle(timeout: float | None = None, *, status: int = 1) -> bool:
    """Wait up to `timeout` for every pending save, log each failure no `wait()` raised;
    True when all are done. A save that fails later still fails the exit, with `status`."""
    _exit_status[0] = status
    done = wait_all(timeout)
    _report_failures()
    return done


# -- the check at exit -------------------------------------------------------------------
#
# A save still running when the script ends is waited for, and its failure must fail the
# process: the platform then sees a failed replica, not a success without its checkpoint.
# An atexit handler cannot set the exit status (what it raises is printed and ignored),
# so a failure ends the process with os._exit, after the work the exit would have done:
#
# 1. Before threads are joined (threading's own exit hooks, which run before atexit), every
#    pending save is waited for, saying so every PROGRESS_EVERY seconds. Registered after
#    concurrent.futures' hook, so this runs first: that hook forbids new thread pools,
#    which a gs:// save still starting its uploads needs.
# 2. If a save failed and no wait() raised it, its error is logged as one line, and an
#    atexit handler is registered. Registered last, it runs first: it runs every other
#    handler itself (each once: none has run yet), flushes, and exits with status 1 (or
#    a preemption's 143, see `settle`).
#
# What os._exit skips after that is the interpreter's teardown of its modules, which
# writes nothing that a training run keeps. A SIGKILL skips all of it: that save is lost
# with the process, and the platform sees the kill.

PROGRESS_EVERY = 30.0
"""Seconds between the lines that say the exit is waiting for a save."""

_unreported: list[PendingSave] = []
_exit_status = [1]
_armed: list[bool] = []


def _arm_exit_check() -> None:
    if _armed:
        return
    import concurrent.futures.thread  # noqa: F401 - its exit hook must be registered before ours

    try:
        register = threading._register_atexit  # type: ignore[attr-defined]
    except AttributeError:  # an interpreter without it: threads are joined before atexit
        import atexit

        atexit.register(_wait_at_exit)
    else:
        try:
            register(_wait_at_exit)
        except RuntimeError:  # a save started while the interpreter shuts down
            return
    _armed.append(True)


def _wait_at_exit() -> None:
    from vtrain.progress.watchdog import unwatch

    unwatch()  # the script has ended: waiting for its last save is no step to judge
    with _lock:
        pending = sorted(_pending, key=lambda save: save.step)
    for save in pending:
        while not save.join(PROGRESS_EVERY):
            _say(f"vtrain: waiting for the background save of step {save.step} to {save.uri}")
    if _report_failures():
        import atexit

        atexit.register(_exit_failed)


def _report_failures() -> int:
    with _lock:
        failed = list(_unreported)
    count = 0
    for save in failed:
        error = save.failure()
        if error is not None:
            _say(f"{os.path.basename(sys.argv[0]) or 'python'}: error: {shown(error)}", error=True)
            count += 1
    return count


def _exit_failed() -> None:
    import atexit

    atexit.unregister(_exit_failed)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(_exit_status[0])


def _say(line: str, *, error: bool = False) -> None:
    from vtrain.log import logger

    log = logger(__name__)
    with contextlib.suppress(Exception):  # a closed stderr must not hide the exit status
        (log.error if error else log.info)(line)
