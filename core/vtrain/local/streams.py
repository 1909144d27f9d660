"""Each replica run's output pipe, read as it comes: whole lines handed on, the first and last kept.

A run's stdout and stderr are one pipe. Its lines go to the supervisor's `on_line`
(which shows and logs them); its first HEAD_LINES lines are kept for the verdict
(where the run started) and its last TAIL_LINES for its exit (a usage error, a
preemption's commit, what a silent replica last said).
"""

from __future__ import annotations

import os
import selectors
import time
from collections import deque

from vtrain.local.usage_error import TAIL_LINES

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_CHUNK = 65536
HEAD_LINES = 200
"""The first lines of each run, kept for the verdict: where it started (`resume`)."""
DRAIN_SECONDS = 1.0
"""How long the end of the job reads what the dead replicas' pipes still hold."""


class Stream:
    """The read end of one run's stdout and stderr, its unfinished last line and its last lines."""

    def __init__(self, fd: int, name: str) -> None:
        self.fd = fd
        self.name = name
        self.pending = b""
        self.tail: deque[bytes] = deque(maxlen=TAIL_LINES)
        self.head: list[bytes] = []

    def last_lines(self) -> list[bytes]:
        """The last lines it printed, the unfinished one included."""
        return [*self.tail, self.pending]


class Streams:
    """Every open output pipe of the job, registered with the supervisor's selector."""

    def __init__(
        self,
        sel: selectors.BaseSelector,
        on_line: Callable[[str, bytes], None],
        on_unended: Callable[[str, bytes], None],
    ) -> None:
        """`on_line(name, line)` for each whole line; `on_unended(name, data)` for a line that
        grew past a chunk without its end (still shown)."""
        self._sel = sel
        self._on_line = on_line
        self._on_unended = on_unended
        self._open: set[Stream] = set()
        self.heard = time.monotonic()
        """When a replica last printed a line (or when vtrain last said who is silent)."""

    def open(self, fd: int, name: str) -> Stream:
        """Start reading the pipe `fd` of a run of replica `name`."""
        stream = Stream(fd, name)
        self._open.add(stream)
        self._sel.register(fd, selectors.EVENT_READ, stream)
        return stream

    def read(self, stream: Stream) -> bool:
        """Read one chunk; False once nothing more is there now (or ever)."""
        if stream not in self._open:  # closed earlier in this batch of events
            return False
        try:
            chunk = os.read(stream.fd, _CHUNK)
        except BlockingIOError:
            return False
        if not chunk:
            self.close(stream)
            return False
        *lines, stream.pending = (stream.pending + chunk).split(b"\n")
        self.heard = time.monotonic()
        for line in lines:
            self._on_line(stream.name, line)
        stream.tail.extend(lines)
        if len(stream.head) < HEAD_LINES:
            stream.head.extend(lines[: HEAD_LINES - len(stream.head)])
        if len(stream.pending) > _CHUNK:  # a replica that never ends its line is still shown
            self._on_unended(stream.name, stream.pending)
            stream.pending = b""
        return True

    def read_all(self, stream: Stream) -> None:
        """Read what the pipe holds now."""
        while self.read(stream):
            pass

    def close(self, stream: Stream) -> None:
        """Hand on its unfinished last line, and stop reading it."""
        if stream.pending:
            self._on_line(stream.name, stream.pending)
            stream.tail.append(stream.pending)
            stream.pending = b""
        self._sel.unregister(stream.fd)
        os.close(stream.fd)
        self._open.discard(stream)

    def drain(self) -> None:
        """Read every pipe to its end, DRAIN_SECONDS at most, and close them all."""
        # Everything is dead: the pipes end at once, unless a process escaped its group.
        end = time.monotonic() + DRAIN_SECONDS
        while self._open and (left := end - time.monotonic()) > 0:
            for key, _ in self._sel.select(left):
                if isinstance(key.data, Stream):
                    self.read_all(key.data)
        for stream in list(self._open):
            self.close(stream)
