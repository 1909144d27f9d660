"""A run that refused its arguments: a usage error (argparse's, click's) and exit status 2.

A restart passes the very same arguments, so it would be refused again, however
long the script took to reach its parser (`import torch` first): the supervisor
does not restart such a replica, and ends the job quoting the script's own
`error:` line, which names the arguments it refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

USAGE_STATUS = 2
"""The exit status of argparse's `parser.error` and of click's usage errors."""
TAIL_LINES = 40
"""The lines of a run's output kept to look for its usage error: a wrapped usage, the error,
and what the interpreter prints at exit after it (a framework's warnings)."""

# argparse: "usage: task.py [-h] ..." then "task.py: error: ...";
# click: "Usage: task [OPTIONS]" then "Error: No such option: --x".
_USAGE = re.compile(r"\s*usage:", re.IGNORECASE)
_ERROR = re.compile(r"(?:[^:]+: )?error: \S", re.IGNORECASE)
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # argparse colours its output on a terminal (3.14)


def refused_arguments(code: int, tail: Iterable[bytes]) -> str | None:
    """The script's `error:` line when a run that exited with `code` and printed `tail` last
    ended in a usage error; None for any other failure."""
    if code != USAGE_STATUS:
        return None
    lines = [_COLOUR.sub("", line.decode(errors="replace")).strip() for line in tail]
    for i in range(len(lines) - 1, 0, -1):
        if _ERROR.match(lines[i]) and any(_USAGE.match(line) for line in lines[:i]):
            from vtrain.redact import redact_text  # its patterns compile in ms: not at start

            return redact_text(lines[i])
    return None
