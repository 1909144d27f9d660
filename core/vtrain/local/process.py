"""One run of one replica: a process leading a session of its own, its output pipe, its exit.

A replica runs in its own session and process group, so that one signal to the
group reaches everything it started, and a Ctrl-C meant for vtrain does not
reach it. It runs under a guard (`vtrain.local.reaper`) that stops what it
leaves, even what escaped its group, and stops it all when vtrain dies. Its
stdout and stderr share one pipe, which may outlive the process (a child can
hold it) and so belongs to whoever reads it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence

from vtrain.errors import LaunchError
from vtrain.local.reaper import spawn
from vtrain.os_hints import hint_for


def kill_group(pgid: int, sig: int) -> None:
    """Send `sig` to process group `pgid`; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class ReplicaProcess:
    """A started replica. `output` is the read end of its pipe; the reader closes it."""

    def __init__(self, proc: subprocess.Popen[bytes], output: int, pidfd: int | None) -> None:
        self._proc = proc
        self.output = output
        self.pidfd = pidfd
        """Readable once the process has exited (Linux); None where pidfds do not exist."""

    @classmethod
    def start(cls, name: str, command: Sequence[str], env: Mapping[str, str]) -> ReplicaProcess:
        """Start `command` as replica `name`, in a session of its own, with exactly `env`."""
        read_end, write_end = os.pipe()
        try:
            proc = spawn(
                command,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=write_end,
                stderr=write_end,
                start_new_session=True,
            )
        except OSError as e:
            os.close(read_end)
            # The plan found the program; a start that fails anyway is most often a limit.
            raise LaunchError(
                f"could not start {name}: {e.strerror}",
                source="COMMAND",
                value=command[0],
                hint=hint_for(e, "check that every replica can run the program"),
            ) from e
        finally:
            os.close(write_end)
        os.set_blocking(read_end, False)
        pidfd = None
        if hasattr(os, "pidfd_open"):
            with contextlib.suppress(OSError):  # an old kernel: the caller polls instead
                pidfd = os.pidfd_open(proc.pid)
        return cls(proc, read_end, pidfd)

    @property
    def pid(self) -> int:
        """The replica's pid, which is also its process group's id."""
        return self._proc.pid

    def signal(self, sig: int) -> None:
        """Send `sig` to the replica and everything it started."""
        kill_group(self.pid, sig)

    def has_exited(self) -> bool:
        """True once the replica itself has exited; it is not reaped yet (see `reap`)."""
        if hasattr(os, "waitid"):
            # WNOWAIT leaves a zombie: its pid keeps naming the group, so `reap`'s kill
            # cannot reach a stranger that was given a recycled pid.
            flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
            return os.waitid(os.P_PID, self.pid, flags) is not None
        return self._proc.poll() is not None

    def reap(self) -> int:
        """Kill what the replica left in its group, collect its exit code, close the pidfd."""
        # Whatever the replica started dies with it, as it would with its container.
        kill_group(self.pid, signal.SIGKILL)
        code = self._proc.wait()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        return code
