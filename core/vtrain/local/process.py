"""One run of one replica: a process leading a session of its own, its output pipe, its exit.

A replica runs in its own session and process group, so that one signal to the
group reaches everything it started, and a Ctrl-C meant for vtrain does not
reach it. The job's keeper (`vtrain.local.keeper`) starts it, reaps it and
stops what it leaves, and stops it all when vtrain dies. Its stdout and stderr
share one pipe, which may outlive the process (a child can hold it) and so
belongs to whoever reads it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence

from vtrain.errors import LaunchError
from vtrain.local.keeper import Keeper
from vtrain.local.reaper import kill_group
from vtrain.os_hints import hint_for

__all__ = ["ReplicaProcess", "kill_group"]


class ReplicaProcess:
    """A started replica. `output` is the read end of its pipe; the reader closes it."""

    def __init__(self, keeper: Keeper, pid: int, output: int) -> None:
        self._keeper = keeper
        self.pid = pid
        """The replica's pid, which is also its process group's id."""
        self.output = output

    @classmethod
    def start(
        cls,
        keeper: Keeper,
        starts: Iterable[tuple[str, Sequence[str], Mapping[str, str], str | None]],
    ) -> list[ReplicaProcess | LaunchError]:
        """Start each (name, command, env, working folder or None), in a session of its own,
        as `starts` gives it; each one's process or error."""
        given: list[tuple[str, Sequence[str]]] = []
        pipes: list[tuple[int, int]] = []

        def requests() -> Iterator[tuple[Sequence[str], Mapping[str, str], int, str | None]]:
            for name, command, env, cwd in starts:
                given.append((name, command))
                pipes.append(os.pipe())
                yield command, env, pipes[-1][1], cwd

        try:
            started = keeper.spawn(requests())
        except BaseException:
            for r, _ in pipes:
                os.close(r)
            raise
        finally:
            for _, w in pipes:
                os.close(w)
        found: list[ReplicaProcess | LaunchError] = []
        for (name, command), (read_end, _), pid in zip(given, pipes, started, strict=True):
            if isinstance(pid, OSError):
                os.close(read_end)
                # The plan found the program; a start that fails anyway is most often a limit.
                found.append(
                    LaunchError(
                        f"could not start {name}: {pid.strerror}",
                        source="COMMAND",
                        value=command[0],
                        hint=hint_for(pid, "check that every replica can run the program"),
                    )
                )
                continue
            os.set_blocking(read_end, False)
            found.append(cls(keeper, pid, read_end))
        return found

    def signal(self, sig: int) -> None:
        """Send `sig` to the replica and everything it started, while it has not been reaped."""
        self._keeper.signal(self.pid, sig)
