"""Serving replicas: run the framework's service until the job ends, then exit 0.

A parameter server, MXNet's scheduler or any other service never returns to
the training script. The platform ends it with SIGTERM once the chief
succeeds; that is the normal end of its job, so it exits 0, as it does when
the framework itself says the job is over.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from vtrain.cluster import ClusterInfo

if TYPE_CHECKING:
    from vtrain.plugins.base import Plugin


def run_service(plugin: Plugin, info: ClusterInfo, options: Mapping[str, Any]) -> NoReturn:
    """Run `plugin.serve` for this replica; exit 0 when it returns or SIGTERM/SIGINT arrives."""
    stopped = threading.Event()
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stopped.set())
    print(f"vtrain: {info.role} {info.index} serves {plugin.name} until the job ends", flush=True)
    # Frameworks leave service threads that cannot be joined (TensorFlow's gRPC server):
    # leave without waiting for them, or a failed service would hang instead of failing.
    status = 0
    try:
        plugin.serve(info, stopped, **options)
    except BaseException:  # noqa: BLE001 - reported here, then the process ends with status 1
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
