"""The lines of a stuck trainer's stack dump (faulthandler's format), to tell them from its words.

    Thread 0x00007f0c1a2b3740 (most recent call first):
      File "/work/train.py", line 112 in <module>

faulthandler writes `line N in name` where a traceback writes `line N, in name`,
so a dump's frame is never taken for a traceback's. The rehearsal keeps these
lines in the replica's log and off its console, and never quotes one as the line
that says why a replica failed.
"""

from __future__ import annotations

import re

_DUMP = re.compile(
    r"(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):"
    r'|  File ".*", line \d+ in \S.*'
    r"|  <no Python frame>"
    r"|  \.\.\. \(truncated\)"
)


def is_stack_line(line: str | bytes) -> bool:
    """True for a line of a faulthandler dump (a thread's header, a frame)."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    return _DUMP.fullmatch(text.rstrip("\r\n")) is not None
