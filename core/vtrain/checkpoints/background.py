"""Saves that return at once: a snapshot taken in the call, the write and the commit on a thread.

As in orbax's AsyncCheckpointer and torch.distributed.checkpoint.async_save,
the caller only pays for the copy that makes the payload its own: buffers
nobody else holds are copied (into the previous save's buffers, already in
memory), immutable bytes are not, a writer runs into a staging folder (a
`Snapshot` writer runs later, on the thread). The thread
then writes and commits with the same protocol as a blocking save, so a kill
at any moment leaves either the committed step or no step.

The thread is not a daemon: the interpreter waits for it at exit, and the
preemption handler waits for every pending save within its grace budget.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable

from vtrain.checkpoints.commit import call_writer
from vtrain.checkpoints.layout import TMP_PREFIX, step_folder, token
from vtrain.checkpoints.payload import Payload
from vtrain.storage.files import os_errors
from vtrain.storage.location import Location

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
        import tempfile  # here, not at the top: `import vtrain` stays light

        folder = tempfile.mkdtemp(prefix=f"vtrain-stage-{step}-")
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
        with _lock:
            _pending.add(self)
        self._thread.start()

    def _run(self, work: Callable[[], object]) -> None:
        try:
            work()
        except BaseException as e:  # kept for wait(): the caller's thread reports it
            self.error = e
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
