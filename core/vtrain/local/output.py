"""What a person sees of a local job: each replica's lines under its name, and its log file.

Every line a replica prints goes to the terminal prefixed with the replica's
name (coloured when the terminal is a terminal and NO_COLOR is unset), and,
as printed, to ``<output>/replica-logs/<name>.log`` -- beside, not inside, the
TensorBoard folder, which the job itself writes.

vtrain's own lines (the job's header, its notes) go through `vtrain.redact`;
a replica's lines are shown and logged as the replica printed them: they are
the program's own record, and no pattern can tell which of its words are
secret. A program that prints its flags or environment should redact itself.

A log that cannot be written (a full disk, `ulimit -f`) is reported once, on
the terminal, and dropped: the job goes on, shown but no longer logged.

Framework noise (`vtrain.local.noise`) is logged and not shown, unless the display
is verbose. On a terminal the live view (`vtrain.local.live`) stays below the lines:
each write erases it, each flush draws it again.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Sequence

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO, TextIO

    from vtrain.local.live import Block, Display, Row
    from vtrain.local.noise import Noise

# Cyan, yellow, magenta, green, blue, then the bright ones; red is kept for vtrain's own notes.
_COLOURS = ("36", "33", "35", "32", "34", "96", "93", "95", "92", "94")
_NOTE_COLOUR = "1;31"
NOTE_NAME = "vtrain"


def log_path(output_dir: str, name: str) -> str:
    """The log file of replica `name` in a job writing to `output_dir`."""
    return os.path.join(output_dir, "replica-logs", f"{name}.log")


def use_colour(stream: TextIO) -> bool:
    """True when `stream` is a terminal and the user has not asked for NO_COLOR."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and "NO_COLOR" not in os.environ


class Output:
    """Writes replica lines, prefixed, to a stream and to one log file per replica."""

    def __init__(
        self,
        names: Sequence[str],
        output_dir: str,
        stream: TextIO,
        *,
        colour: bool | None = None,
        open_logs: bool = True,
        display: Display | None = None,
    ) -> None:
        """`open_logs=False`: the log files wait for `open_logs` (a replica's lines before it
        are not logged); `display`: the live view, the noise, the progress lines (default:
        `Display()`)."""
        if display is None:
            from vtrain.local.live import Display

            display = Display()
        self._stream: TextIO | None = stream
        self._display = display
        self._noise: Noise | None = None  # made at the first line: its patterns cost
        self._block: Block | None = None
        self._live = display.live and _terminal(stream)
        self._colour = use_colour(stream) if colour is None else colour
        width = max(len(n) for n in (*names, NOTE_NAME))
        self._prefix = {
            n: self._paint(f"{n:<{width}} | ", _COLOURS[i % len(_COLOURS)])
            for i, n in enumerate(names)
        }
        self._prefix[NOTE_NAME] = self._paint(f"{NOTE_NAME:<{width}} | ", _NOTE_COLOUR)
        self._logs: dict[str, BinaryIO] = {}
        self._log_paths = {n: log_path(output_dir, n) for n in names}
        self._log_dir = os.path.dirname(log_path(output_dir, "x"))
        if open_logs:
            self.open_logs()

    def open_logs(self) -> None:
        """Create (or empty) each replica's log file, open for the job's whole life."""
        os.makedirs(self._log_dir, exist_ok=True)
        for name, path in self._log_paths.items():
            self._logs[name] = open(path, "wb")  # noqa: SIM115 - `close` closes them

    def _paint(self, text: str, colour: str) -> str:
        return f"\033[{colour}m{text}\033[0m" if self._colour else text

    def line(self, name: str, data: bytes) -> None:
        """One line (without its newline) that replica `name` printed."""
        self._log(name, data + b"\n")
        self.show(name, data)

    def show(self, name: str, data: bytes) -> None:
        """A line replica `name` printed, shown and not logged (its log has it already); not
        even shown when it is framework noise (`vtrain.local.noise`)."""
        if self._noise is None:
            from vtrain.local.noise import Noise

            self._noise = Noise(verbose=self._display.verbose)
        if self._noise.hides(data):
            return
        text = data.decode("utf-8", "replace").rstrip("\r")
        self.write(f"{self._prefix[name]}{text}\n")

    def log_only(self, name: str, data: bytes) -> None:
        """A line replica `name` printed, written to its log file and not shown."""
        self._log(name, data + b"\n")

    def aside(self, name: str, text: str) -> None:
        """vtrain's line under replica `name`'s prefix, shown, not logged (`vtrain.local.quiet`)."""
        from vtrain.redact import redact_text

        self.write(f"{self._prefix[name]}{redact_text(text)}\n")

    def note(self, text: str, replica: str | None = None) -> None:
        """vtrain's own message; also written to the log of `replica` when one is named
        (`vtrain local run`'s console handler writes each of `vtrain.local.notes`' records so)."""
        from vtrain.redact import redact_text

        text = redact_text(text)
        if replica is not None:
            self._log(replica, f"[vtrain] {text}\n".encode())
        self.write(f"{self._prefix[NOTE_NAME]}{text}\n")

    def write(self, text: str) -> None:
        """Text as it is (the summary table), above the live view."""
        if self._stream is not None:
            try:
                if self._block is not None:
                    text = self._block.erase() + text
                self._stream.write(text)
            except OSError as e:
                self._lose_stream(e)

    @property
    def progress_every(self) -> float:
        """Seconds between two calls of `progress`: the live view's redraws, or the lines."""
        from vtrain.local.live import LIVE_EVERY

        return LIVE_EVERY if self._live else self._display.progress_every

    def progress(self, rows: list[Row]) -> None:
        """Where each replica stands: the live view on a terminal, else the progress lines."""
        from vtrain.local.live import Block, plain, render

        if not self._live:
            for line in plain(rows):
                self.note(line)
            return
        if self._stream is None:
            return
        if self._block is None:
            self._block = Block()
        width, height = _size(self._stream)
        self._block.lines = render(rows, width, height)
        self.write("")  # off the screen: the flush draws it again

    def end_progress(self) -> None:
        """The job has ended: the live view leaves the screen, for good."""
        if self._block is not None:
            self.write("")
            self._block, self._live = None, False

    def flush(self) -> None:
        """Push out what was written so far (and the live view below it)."""
        if self._stream is not None:
            try:
                if self._block is not None:
                    self._stream.write(self._block.draw())
                self._stream.flush()
            except OSError as e:
                self._lose_stream(e)
        for name in list(self._logs):
            self._log(name, b"", flush=True)

    def close(self) -> None:
        """Flush and close the log files (the live view leaves the screen)."""
        self.end_progress()
        self.flush()
        for name in list(self._logs):
            self._log(name, b"", close=True)

    def _log(self, name: str, data: bytes, *, flush: bool = False, close: bool = False) -> None:
        log = self._logs.get(name)
        if log is None:  # closed, or given up on after a failed write
            return
        try:
            if data:
                log.write(data)
            if flush:
                log.flush()
            if close:
                del self._logs[name]
                log.close()
        except OSError as e:
            self._logs.pop(name, None)
            # Its buffer cannot be written either: drop it with the file, quietly.
            with contextlib.suppress(OSError):
                log.close()
            self.write(
                f"{self._prefix[NOTE_NAME]}cannot write {log.name} ({_why(e)}); "
                f"{name}'s lines are still shown here, no longer logged\n"
            )

    def _lose_stream(self, e: OSError) -> None:
        self._stream = None
        # `vtrain local run ... | head` closes our stdout: nothing to say, the job goes on, logged.
        if e.errno not in (errno.EPIPE, errno.EINVAL):
            from vtrain.log import logger

            logger(__name__).warning(f"vtrain local: cannot write the output ({_why(e)})")


def _terminal(stream: TextIO) -> bool:
    """True when `stream` is a terminal that moves its cursor (not TERM=dumb)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM", "dumb") != "dumb"


def _size(stream: TextIO) -> tuple[int, int]:
    """The terminal's columns and lines (80 x 24 where it cannot say)."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return 80, 24
    return size.columns or 80, size.lines or 24


def _why(e: OSError) -> str:
    """`[Errno 28] No space left on device`, as a person reads it."""
    if e.errno is None:
        return str(e)
    return f"{errno.errorcode.get(e.errno, e.errno)}: {e.strerror or os.strerror(e.errno)}"
