"""Records leave the training loop through a thread of their own, bounded both ways.

`put` appends to a queue and returns: the loop never waits on a disk, a bucket or a
server. Once a second (and at `close`) the thread hands what is queued to the sink.
A sink that fails gets one line in the log, then its records wait for the next try
(backoff doubles to a minute); a queue past MOST records drops the oldest new ones
and says so once. `close` waits at most `timeout` seconds, and says what it left.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from vtrain.log import logger

MOST = 100_000
"""Records queued at most (about 10 MB of metric lines)."""
EVERY = 1.0
"""Seconds between two hand-overs to the sink."""
_LONGEST_BACKOFF = 60.0

log = logger(__name__)


class Sender:
    """A queue of encoded records and the thread that writes them with `sink`."""

    def __init__(self, sink: Callable[[list[bytes]], None], what: str, *, most: int = MOST):
        self._sink = sink
        self._what = what
        self._most = most
        self._queue: deque[bytes] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._dropped = 0
        self._failing: str | None = None
        self._thread = threading.Thread(target=self._run, name="vtrain-track", daemon=True)
        self._thread.start()

    def put(self, data: bytes) -> None:
        """Queue one record (never blocks; past the bound it is dropped, said once)."""
        with self._lock:
            if len(self._queue) < self._most:
                self._queue.append(data)
                return
            self._dropped += 1
            first = self._dropped == 1
        if first:
            log.warning(
                f"vtrain: {self._what}: {self._most} records are waiting to be written; "
                "dropping new ones until they are (the count is said at the end)"
            )

    def _run(self) -> None:
        pause = EVERY
        while True:
            self._wake.wait(pause)
            self._wake.clear()
            ok = self._send()
            if self._closed:  # what came since that hand-over goes too, unless the sink fails
                while ok and self._queue:
                    ok = self._send()
                return
            pause = EVERY if ok else min(_LONGEST_BACKOFF, max(2 * pause, 2.0))

    def _send(self) -> bool:
        with self._lock:
            batch = list(self._queue)
        if not batch:
            return True
        try:
            self._sink(batch)
        except Exception as e:  # a backend's own errors, whatever their class: said, retried
            from vtrain.redact import redact_text  # a signed URL, a token in a server's reply

            said = redact_text(f"{type(e).__name__}: {e}")
            if self._failing is None:
                log.warning(f"vtrain: {self._what}: cannot write ({said}); retrying, with backoff")
            self._failing = said
            return False
        with self._lock:
            for _ in batch:
                self._queue.popleft()
        if self._failing is not None:
            log.info(f"vtrain: {self._what}: writing again")
            self._failing = None
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, waiting at most `timeout` seconds; say what was left."""
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        self._thread.join(timeout)
        with self._lock:
            left = len(self._queue)
        if self._thread.is_alive() or left:
            why = f" ({self._failing})" if self._failing else ""
            # Still at it past the bound, or given up after the sink's last failure.
            when = f"after {timeout:g} s" if self._thread.is_alive() else "at close"
            log.warning(f"vtrain: {self._what}: {left} records not written {when}{why}")
        if self._dropped:
            log.warning(f"vtrain: {self._what}: {self._dropped} records dropped in all")
