"""The scheduler and server child processes a replica starts, and their end with it.

A child ends with its replica, whichever way the replica ends: at `stop()`
(from the handle's close, or at interpreter exit), by the kernel when the
replica is killed (see vtrain_mxnet.service), and by the platform's stop of
the replica's process group.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping

from vtrain import LaunchError

# After the workers finalize, ps-lite's scheduler and servers end within a second or two.
DEFAULT_PATIENCE = 30.0
_KILL_AFTER = 5.0


class Children:
    """The MXNet service processes this replica started."""

    def __init__(self) -> None:
        self._procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        self._lock = threading.Lock()
        atexit.register(self.stop, 0.0)

    def start(self, role: str, environ: Mapping[str, str]) -> int:
        """Start MXNet's `role` (scheduler or server) as a child; return its pid."""
        main = threading.current_thread() is threading.main_thread()
        command = [
            sys.executable,
            "-m",
            "vtrain_mxnet.service_process",
            "--parent",
            str(os.getpid()),
        ]
        if not main:
            # The kernel's parent-death signal follows the thread that forked, not the process.
            command.append("--no-pdeathsig")
        env = {**environ, "DMLC_ROLE": role}
        try:
            proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)
        except OSError as e:
            raise LaunchError(
                f"could not start MXNet's {role}: {e.strerror}",
                source="vtrain_mxnet.service",
                value=sys.executable,
            ) from e
        with self._lock:
            self._procs.append((role, proc))
        return proc.pid

    @property
    def pids(self) -> dict[str, int]:
        """Role -> pid of each child started."""
        return {role: proc.pid for role, proc in self._procs}

    def poll(self) -> dict[str, int | None]:
        """Role -> exit status of each child, None while it runs."""
        return {role: proc.poll() for role, proc in self._procs}

    def check(self) -> None:
        """Raise when a child has already ended with a failure."""
        for role, proc in self._procs:
            code = proc.poll()
            if code not in (None, 0):
                raise LaunchError(
                    f"MXNet's {role}, started beside this replica, exited with status {code}",
                    source="vtrain_mxnet.service",
                    value=proc.pid,
                    hint="its log lines are above, in this replica's output",
                )

    def stop(self, patience: float = DEFAULT_PATIENCE) -> dict[str, int]:
        """Let each child end by itself for up to `patience` s, then end it; return the codes."""
        with self._lock:
            procs, self._procs = self._procs, []
        end = time.monotonic() + patience
        codes = {}
        for role, proc in procs:
            try:
                codes[role] = proc.wait(timeout=max(0.0, end - time.monotonic()))
                continue
            except subprocess.TimeoutExpired:
                proc.terminate()
            try:
                codes[role] = proc.wait(timeout=_KILL_AFTER)
            except subprocess.TimeoutExpired:
                proc.kill()
                codes[role] = proc.wait()
        return codes
