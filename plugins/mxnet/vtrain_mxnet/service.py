"""MXNet's scheduler or a server, run in this process: by a serving replica, or by its child.

A replica that serves (the chief that only schedules, a parameter server)
runs the loop itself (`run_role`, from the plugin's `serve`). A training
replica that also hosts the scheduler or a server starts this module as a
child: `python -m vtrain_mxnet.service_process --parent PID` with
DMLC_ROLE=scheduler|server. The child must never outlive the replica that
started it: on Linux the kernel kills it when its parent dies
(PR_SET_PDEATHSIG), and a watchdog thread ends it wherever the parent is
gone, if the kernel could not be asked.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import signal
import sys
import threading

from vtrain.log import logger
from vtrain_mxnet.layout import SERVER, SERVICE_ROLES

log = logger(__name__)

# A server answers each request on ps-lite's receiving thread; the serial engine runs its
# merges there at once, where the threaded engine hands each to a worker thread and back
# (bench/setup_mxnet.py measures both). The user's choice wins.
ENGINE = "MXNET_ENGINE_TYPE"
SERVER_ENGINE = "NaiveEngine"

_PR_SET_PDEATHSIG = 1
_WATCH_SECONDS = 0.5


def run_role(role: str) -> int:
    """Run MXNet's `role` loop in this process until the job ends; return its exit status.

    Importing mxnet with DMLC_ROLE=scheduler|server runs the loop, then calls
    sys.exit(): call this before anything else in the process imports mxnet.
    """
    if role == SERVER:
        os.environ.setdefault(ENGINE, SERVER_ENGINE)
    try:
        import mxnet  # noqa: F401 - with this DMLC_ROLE the import runs the role's loop
    except SystemExit as e:  # mxnet's own end of the loop
        return e.code if isinstance(e.code, int) else 0
    return 0


def die_with(parent: int, *, kernel: bool) -> None:
    """End this process as soon as `parent` is gone."""
    if kernel and sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # The parent may have died before the line above: then it never fires. And where the
    # kernel cannot be asked (or the parent thread that started us may end first), watch.
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            threading.Event().wait(_WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="vtrain-parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """Run the DMLC_ROLE this process was given; return its exit status."""
    parser = argparse.ArgumentParser(prog="python -m vtrain_mxnet.service_process")
    parser.add_argument("--parent", type=int, required=True, help="the replica's pid")
    parser.add_argument(
        "--no-pdeathsig",
        action="store_true",
        help="the parent started us from a thread that may end first: watch the pid only",
    )
    args = parser.parse_args(argv)
    role = os.environ.get("DMLC_ROLE")
    if role not in SERVICE_ROLES:
        log.error(f"vtrain_mxnet.service: DMLC_ROLE is {role!r}, not scheduler or server")
        return 2
    die_with(args.parent, kernel=not args.no_pdeathsig)
    return run_role(role)
