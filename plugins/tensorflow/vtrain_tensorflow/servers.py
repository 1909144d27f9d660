"""Worker and parameter-server replicas of ParameterServerStrategy: serve until the job ends.

Under parameter-server training only the chief runs the program; the others
host a gRPC server that the chief dispatches to. The platform stops them with
SIGTERM when the chief succeeds; that is the normal end, so they exit 0.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import NoReturn

from vtrain import ClusterInfo
from vtrain_tensorflow.strategy import cluster_resolver


def serve_until_stopped(info: ClusterInfo) -> NoReturn:
    """Start this replica's tf.distribute.Server and block until SIGTERM or SIGINT."""
    import tensorflow as tf

    resolver = cluster_resolver(info)
    server = tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=info.role,
        task_index=info.index,
        protocol="grpc",
        start=True,
    )
    stopped = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopped.set())
    print(f"vtrain: {info.role} {info.index} serving at {server.target}", flush=True)
    # server.join() blocks in C++ where no Python signal handler can run; wait here instead.
    while not stopped.wait(1.0):
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    # TensorFlow's server threads cannot be stopped cleanly; the job is over, so leave now.
    os._exit(0)
