"""Quiet peers: a replica that fails because another was lost shows one line, not its traceback.

When a replica dies (`--kill`, a crash), those that trained with it fail in
their next collective, each with some thirty lines of traceback that say only
that a peer went away. After such a loss, a peer's traceback, and what it
prints after it, goes to its own log file alone; the console gets one line in
its place, `lost worker-0: exiting to restart`. A peer still running
QUIET_SECONDS later was not on its way out: its lines are shown again.
"""

from __future__ import annotations

TRACEBACK = b"Traceback (most recent call last):"
QUIET_SECONDS = 10.0


class Quiet:
    """Which replicas' lines go to their log alone, since which moment."""

    def __init__(self) -> None:
        self._lost: tuple[str, float] | None = None
        self._since: dict[str, float] = {}
        self._shown_again: set[str] = set()

    def lost(self, name: str, now: float) -> None:
        """Replica `name` is gone (killed, or failed by itself) at `now`."""
        if name not in self._since:  # a quiet peer's own exit is not a new loss
            self._lost = (name, now)

    def restarted(self, name: str) -> None:
        """A new run of `name`: its lines are its own again."""
        self._since.pop(name, None)
        self._shown_again.discard(name)

    def quiet(self, name: str) -> bool:
        """True while `name`'s lines go to its log alone."""
        return name in self._since and name not in self._shown_again

    def sort(
        self, name: str, started: float | None, line: bytes, now: float
    ) -> tuple[bool, str | None]:
        """(show `line` on the console?, a line to show first) for a line `name` printed."""
        if name in self._shown_again:
            return True, None
        since = self._since.get(name)
        if since is None:
            lost = self._lost
            if lost is None or lost[0] == name or started is None or started > lost[1]:
                return True, None  # nothing lost, or it is the lost one, or a later run
            if TRACEBACK not in line:  # anywhere: torch prefixes each line with `[rank0]: `
                return True, None
            self._since[name] = now
            return False, f"lost {lost[0]}: exiting to restart (the traceback is in its log)"
        if now - since < QUIET_SECONDS:
            return False, None
        self._shown_again.add(name)
        return True, f"still running {QUIET_SECONDS:g} s after its traceback: its lines follow"
