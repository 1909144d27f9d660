"""Quiet peers: a replica that fails because another was lost shows one line, not its traceback.

When a replica dies (`--kill`, a crash), those that trained with it fail in
their next collective, each with some thirty lines of traceback that say only
that a peer went away. After such a loss, a peer's traceback, and what it
prints after it, goes to its own log file alone; the console gets one line in
its place, `lost worker-0: exiting to restart`. A peer still running
QUIET_SECONDS later was not on its way out: its lines are shown again.

A peer's traceback may be its own failure, though: the same program fails the
same way in every replica (an import error, the same bad key). So the console
holds a peer's traceback until its exception line, then judges it
(`own_failure`): a failure to load the program, which no peer causes, or the
very exception the lost replica died of, is the peer's own, and shown whole.
Its log gets each line at once, whatever the console does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TRACEBACK = b"Traceback (most recent call last):"
QUIET_SECONDS = 10.0
HELD_LINES = 500
"""A traceback held this long without its exception line is taken for a peer's."""

# The program could not load: it failed before it met any peer.
_NOT_FROM_PEERS = frozenset(
    {b"ImportError", b"ModuleNotFoundError", b"SyntaxError", b"IndentationError", b"TabError"}
)
_PREFIX = re.compile(rb"\[[^\]\s]*\]: ?")  # torch prefixes each line with `[rank0]: `

Console = tuple[str | None, tuple[bytes, ...]]
"""What the console gets for a line: vtrain's line to show first, then the replica's lines."""


def _plain(line: bytes) -> bytes:
    return _PREFIX.sub(b"", line, count=1).rstrip()


def exception_line(line: bytes) -> bytes | None:
    """The exception a traceback ends with, when `line` (within one) is it: not indented, as
    its frames are; None for any other line."""
    plain = _plain(line)
    if not plain or plain[:1].isspace() or TRACEBACK in plain:
        return None
    return plain


def exceptions(lines: Iterable[bytes]) -> frozenset[bytes]:
    """The exception lines of the tracebacks in `lines` (a run's last lines)."""
    found = set()
    inside = False
    for line in lines:
        if TRACEBACK in line:
            inside = True
        elif inside and (exception := exception_line(line)) is not None:
            found.add(exception)
            inside = False
    return frozenset(found)


def own_failure(exception: bytes, lost: frozenset[bytes]) -> bool:
    """True when a peer's traceback that ends in `exception` is its own failure, not the loss
    of the replica whose tracebacks ended in `lost`."""
    name = exception.partition(b":")[0].rpartition(b".")[2]
    return name in _NOT_FROM_PEERS or exception in lost


class Quiet:
    """Which replicas' lines go to their log alone, since which moment."""

    def __init__(self) -> None:
        self._lost: tuple[str, float, frozenset[bytes]] | None = None
        self._held: dict[str, list[bytes]] = {}
        self._since: dict[str, float] = {}
        self._shown_again: set[str] = set()

    def lost(self, name: str, now: float, tail: Iterable[bytes] = ()) -> None:
        """Replica `name` is gone (killed, or failed by itself) at `now`, after printing `tail`."""
        if name not in self._since:  # a quiet peer's own exit is not a new loss
            self._lost = (name, now, exceptions(tail))

    def restarted(self, name: str) -> None:
        """A new run of `name`: its lines are its own again."""
        self._since.pop(name, None)
        self._held.pop(name, None)
        self._shown_again.discard(name)

    def quiet(self, name: str) -> bool:
        """True while `name`'s lines go to its log alone."""
        return name in self._since and name not in self._shown_again

    def sort(self, name: str, started: float | None, line: bytes, now: float) -> Console:
        """What the console shows, now, for a `line` that `name` printed (its log has it)."""
        if name in self._shown_again:
            return None, (line,)
        held = self._held.get(name)
        if held is not None:
            held.append(line)
            exception = exception_line(line)
            if exception is None and len(held) < HELD_LINES:
                return None, ()
            del self._held[name]
            assert self._lost is not None
            if exception is not None and own_failure(exception, self._lost[2]):
                return None, tuple(held)
            return self._quiet_from(name, now), ()
        since = self._since.get(name)
        if since is None:
            lost = self._lost
            if lost is None or lost[0] == name or started is None or started > lost[1]:
                return None, (line,)  # nothing lost, or it is the lost one, or a later run
            if TRACEBACK not in line:  # anywhere: torch prefixes each line with `[rank0]: `
                return None, (line,)
            if _plain(line)[:1].isspace():  # an exception group's, whose lines are all indented
                return self._quiet_from(name, now), ()
            self._held[name] = [line]
            return None, ()
        if now - since < QUIET_SECONDS:
            return None, ()
        self._shown_again.add(name)
        return f"still running {QUIET_SECONDS:g} s after its traceback: its lines follow", (line,)

    def _quiet_from(self, name: str, now: float) -> str:
        """`name`'s lines go to its log alone from `now`: the line that says so instead."""
        assert self._lost is not None
        self._since[name] = now
        return f"lost {self._lost[0]}: exiting to restart (the traceback is in its log)"
