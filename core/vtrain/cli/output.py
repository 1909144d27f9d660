"""What the command line shows: a command's results on stdout, its one error line on stderr,
and vtrain's log records on the console.

This is the one module of vtrain that prints. Everything else speaks through
`vtrain.log`; `console()` is where the command line decides how that looks on a
terminal (as the lines always looked: the record's message, on stderr).
"""

from __future__ import annotations

import sys

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from typing import TextIO


def say(text: str = "", *, end: str = "\n", stream: TextIO | None = None) -> None:
    """A command's result (a table, a verdict, JSON), on stdout unless told, flushed."""
    print(text, end=end, file=sys.stdout if stream is None else stream, flush=True)


def complain(text: str) -> None:
    """A line for the person at the terminal on stderr: an error, a note about the command."""
    print(text, file=sys.stderr, flush=True)


def console() -> AbstractContextManager[None]:
    """While a command runs: vtrain's log records on the console (stderr), at INFO and above,
    as vtrain has always shown them, whatever handlers the root logger has."""
    from vtrain.log import console as installed

    return installed()
