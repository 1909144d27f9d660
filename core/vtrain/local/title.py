"""A process's title: what `ps`, `top` and `pgrep -f` show for it (Linux), set from pure Python.

The keeper and its guard are forks of vtrain, so they start with vtrain's own
command line, and `pkill -f "vtrain local"` would kill them with vtrain. A title
names them for what they are instead. The kernel reads /proc/PID/cmdline from
the memory the original argv lies in, between arg_start and arg_end of
/proc/self/stat; the process may write there (setproctitle does the same in C).
The title fits in that space, cut if it must be, and the rest is zeroed: the
last byte stays NUL, so the kernel reads only this space, never the environment
after it. Python keeps copies of argv of its own (sys.argv, sys.orig_argv), so
nothing of the interpreter reads this memory again. /proc/PID/comm, what `top`
and `pgrep` without -f show, is set by prctl(PR_SET_NAME), 15 bytes at most.
"""

from __future__ import annotations

import contextlib
import sys

_PR_SET_NAME = 15
_COMM_BYTES = 15
# Fields 48 and 49 of /proc/self/stat, counted after the ")" that ends the name (field 2).
_ARG_START, _ARG_END = 48 - 3, 49 - 3


def set_title(title: str, name: str) -> bool:
    """Show `title` as this process's command line and `name` as its name; False where
    the command line could not be changed (not Linux, or /proc does not tell where it is)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode(errors="replace")[:_COMM_BYTES]), 0, 0, 0)
    start, end = _arg_area()
    if end - start < 2:
        return False
    data = title.encode(errors="replace")[: end - start - 1]
    ctypes.memmove(start, data.ljust(end - start, b"\0"), end - start)
    return True


def _arg_area() -> tuple[int, int]:
    """Where this process's argv lies in its memory: (start, end); (0, 0) when unknown."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[_ARG_START]), int(fields[_ARG_END])
    return 0, 0
