"""Serving replicas: run the framework's service until the job ends, then exit 0.

A parameter server, MXNet's scheduler or any other service never returns to
the training script. The platform ends it with SIGTERM once the chief
succeeds; that is the normal end of its job, so it exits 0, as it does when
the framework itself says the job is over. The chief itself (MXNet's
scheduler, in its default layout) is never ended that way: the job ends when
it does. A SIGTERM there is a preemption or a cancel, so it exits 143, or the
platform would take the job for a success.

Under `vtrain local run` a serving replica also says that it serves (the
variable SERVES_FILE names a file to create), so that the launcher stops it as
soon as the chief succeeds, while the replicas that train get time to finish.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Mapping
from typing import Any, NoReturn, Protocol

from vtrain.cluster import ClusterInfo
from vtrain.log import logger
from vtrain.variables import SERVES_FILE

log = logger(__name__)


class Service(Protocol):
    """What `run_service` needs of a plugin (`vtrain.plugins.base.Plugin` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def job_restarts(self) -> str | None: ...
    def serve(self, info: ClusterInfo, stopped: threading.Event, **options: Any) -> None: ...


def announce(environ: Mapping[str, str] | None = None, *, job_restarts: str | None = None) -> None:
    """Tell the launcher, when it asked (SERVES_FILE), that this replica serves until stopped.

    The file holds the plugin's `job_restarts` (empty when None): the services are
    what a lone restarted replica cannot rejoin, and the launcher reads why there.
    """
    path = (os.environ if environ is None else environ).get(SERVES_FILE)
    if path:
        try:
            with open(path, "w") as f:
                f.write(job_restarts or "")
        except OSError as e:  # the launcher then stops it after the trainers' grace: say why
            log.warning(f"vtrain: cannot say that this replica serves ({SERVES_FILE}): {e}")


def _stop_on_signals(stopped: threading.Event) -> None:
    """Set `stopped` on SIGTERM or SIGINT, from a thread of its own.

    A handler runs between two instructions of the main thread, which may be inside
    `stopped.wait()`, holding the event's lock: `stopped.set()` there would wait for
    that lock forever. The handler only writes to a pipe; the thread sets the event.
    """
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)

    def on_signal(signum: int, frame: object) -> None:
        with contextlib.suppress(OSError):  # a full pipe has said it already
            os.write(write_end, b"\0")

    def watch() -> None:
        os.read(read_end, 1)
        stopped.set()

    threading.Thread(target=watch, name="vtrain-stop", daemon=True).start()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)


def run_service(plugin: Service, info: ClusterInfo, options: Mapping[str, Any]) -> NoReturn:
    """Run `plugin.serve` for this replica; exit 0 when it returns or SIGTERM/SIGINT arrives
    (143 for the chief, whose SIGTERM is never the job's end)."""
    stopped = threading.Event()
    if threading.current_thread() is threading.main_thread():
        _stop_on_signals(stopped)
    announce(job_restarts=plugin.job_restarts)  # after the handlers: it may be stopped from here
    log.info(f"vtrain: {info.role} {info.index} serves {plugin.name} until the job ends")
    # Frameworks leave service threads that cannot be joined (TensorFlow's gRPC server):
    # leave without waiting for them, or a failed service would hang instead of failing.
    status = 0
    try:
        plugin.serve(info, stopped, **options)
    except BaseException:  # noqa: BLE001 - reported here, then the process ends with status 1
        traceback.print_exc()
        status = 1
    if status == 0 and stopped.is_set() and info.role == "chief":
        log.info(
            f"vtrain: {info.role} {info.index} stopped by a signal: not the job's end, exiting 143"
        )
        status = 128 + signal.SIGTERM
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
