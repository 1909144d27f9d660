"""When a process started, from /proc: with its pid, what names it across pid reuse.

Light on purpose (os alone): the rehearsal's folder lock reads it before the
replicas start, and `vtrain.storage.owner` builds its owners on it.
"""

from __future__ import annotations

# /proc/<pid>/stat: the process name may hold spaces and parentheses, so fields are counted
# after the last ")"; there, the start time (field 22 of the whole line) is the 20th.
_START_FIELD = 19


def start_time(pid: int) -> int | None:
    """When `pid` started, in clock ticks after boot; None if it is gone or /proc is missing."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2 :].split()[_START_FIELD])
    except (OSError, ValueError, IndexError):
        return None
