"""Worker and parameter-server replicas of ParameterServerStrategy: serve until the job ends.

Under parameter-server training only the chief runs the program; the others
host a gRPC server that the chief dispatches to. The platform stops them with
SIGTERM when the chief succeeds; that is the normal end, so they exit 0
(vtrain.plugins.serve.run_service sees to both).
"""

from __future__ import annotations

import threading

from vtrain import ClusterInfo
from vtrain.log import logger
from vtrain_tensorflow.strategy import cluster_resolver

log = logger(__name__)


def serve_until_stopped(info: ClusterInfo, stopped: threading.Event) -> None:
    """Start this replica's tf.distribute.Server and serve until `stopped` is set."""
    import tensorflow as tf

    resolver = cluster_resolver(info)
    server = tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=info.role,
        task_index=info.index,
        protocol="grpc",
        start=True,
    )
    log.info(f"vtrain: {info.role} {info.index} serving at {server.target}")
    # server.join() blocks in C++ where no Python signal handler can run; wait here instead.
    # TensorFlow's server threads cannot be stopped: the core's run_service exits past them.
    while not stopped.wait(1.0):
        pass
