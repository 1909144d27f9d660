"""One line instead of a traceback for what a person running a script can fix.

`vtrain.one_line_errors()`, called at a script's top before it imports its
framework, makes two kinds of uncaught error end the script with one line on
stderr and exit status 1: a `VtrainError` (its message already says what was
wrong and what to do), and a framework that is not installed (`import torch`
without torch), shown with the extra that installs it. Anything else keeps
Python's traceback: it is a bug to read, not a setting to change.
"""

from __future__ import annotations

import os
import sys

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType


def one_line(error: BaseException) -> str | None:
    """What the hook prints for `error`, or None when the traceback should be shown."""
    from vtrain.errors import MissingExtraError, VtrainError, shown
    from vtrain.plugins import extra_for_module
    from vtrain.plugins.extras import real_extra

    if isinstance(error, ModuleNotFoundError) and not isinstance(error, VtrainError):
        extra = extra_for_module(error.name or "")
        if extra is None:
            return None
        error = MissingExtraError("this script", real_extra(extra), module=error.name)
    return shown(error) if isinstance(error, VtrainError) else None


def _hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
    line = one_line(error)
    if line is None:
        _previous[0](kind, error, tb)
    else:
        # The script's last word, as Python's own hook writes its traceback: straight to stderr,
        # not through logging, which the script may have silenced.
        sys.stderr.write(f"{os.path.basename(sys.argv[0]) or 'python'}: error: {line}\n")
        sys.stderr.flush()


_previous = [sys.__excepthook__]


def one_line_errors() -> None:
    """From now on, an uncaught vtrain error or missing framework ends the script in one line."""
    if sys.excepthook is not _hook:
        _previous[0] = sys.excepthook
        sys.excepthook = _hook
