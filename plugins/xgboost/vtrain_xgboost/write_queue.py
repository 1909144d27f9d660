"""One background thread that commits checkpoints and writes tuning metrics, in order.

A boosting round takes milliseconds to tens of milliseconds; a checkpoint commit
(fsyncs, a manifest, a marker) about 20 ms on a local disk, more on /gcs or gs://,
and a metric report a few. Done inline they would cost a tenth of the rounds. The
callbacks take their snapshot on the training thread (the booster's bytes, the
metric's value) and hand the writing here; training ends only once everything
handed over is written, and a write that failed is raised on the training thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any


class WriteQueue:
    """A FIFO of writes run on one daemon thread, started on first use."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()

    def submit(self, write: Callable[..., Any], *args: Any) -> None:
        """Run `write(*args)` after the writes submitted before it; raise an earlier failure."""
        self.raise_failure()
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="vtrain-xgboost", daemon=True
                )
                self._thread.start()
        self._queue.put((write, args))

    def flush(self) -> None:
        """Wait until every submitted write is done; raise the first that failed."""
        self._queue.join()
        self.raise_failure()

    def raise_failure(self) -> None:
        """Raise the first failed write, once."""
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _run(self) -> None:
        while True:
            write, args = self._queue.get()
            try:
                if self._error is None:  # after a failure, later writes would only pile on
                    write(*args)
            except BaseException as e:  # noqa: BLE001 - handed to the training thread
                self._error = e
            finally:
                self._queue.task_done()
