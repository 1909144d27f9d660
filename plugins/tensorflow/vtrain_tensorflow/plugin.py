"""The "tensorflow" plugin: TF_CONFIG that TF2 accepts, the right Keras, the right strategy."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, MutableMapping
from datetime import timedelta

from vtrain import ClusterInfo, ConfigError
from vtrain.cluster import CHIEF, PS, WORKER
from vtrain.plugins.base import KubeflowJob, Plugin
from vtrain.plugins.wait import DEFAULT_WAIT, split_address, wait_for_chief
from vtrain_tensorflow.handle import TensorFlowHandle
from vtrain_tensorflow.internals import LEGACY
from vtrain_tensorflow.keras_choice import VARIABLE, check_not_too_late, chosen, wanted
from vtrain_tensorflow.tf_config_writer import tf_config_for, uses_parameter_servers


class TensorFlowPlugin(Plugin):
    """TensorFlow and Keras from the platform's description."""

    name = "tensorflow"
    extra = "tensorflow"
    requires = ("tensorflow",)
    installs = {"tf_keras": "tensorflow", "tensorboard": "tensorflow"}
    kubeflow = KubeflowJob(kind="TFJob", runtime="vtrain-tensorflow")
    serving_roles = frozenset({WORKER, PS})

    def environment(
        self, info: ClusterInfo, environ: Mapping[str, str], **options: object
    ) -> dict[str, str | None]:
        """TF_CONFIG (removed for a single process), the Keras choice, quiet C++ logs, gRPC."""
        config = tf_config_for(info)
        variables: dict[str, str | None] = {
            "TF_CONFIG": None if config is None else json.dumps(config)
        }
        if wanted(info) == LEGACY:
            variables[VARIABLE] = "1"
        if "TF_CPP_MIN_LOG_LEVEL" not in environ:
            # TensorFlow's C++ start-up log (no CUDA driver on a CPU machine: "failed call to
            # cuInit") would be half of a small job's output; what fails reaches Python anyway.
            variables["TF_CPP_MIN_LOG_LEVEL"] = "3"
        if uses_parameter_servers(info) and "GRPC_FAIL_FAST" not in environ:
            # The coordinator should not fail a whole step when one worker is slow to answer.
            variables["GRPC_FAIL_FAST"] = "use_caller"
        return variables

    def serves(self, info: ClusterInfo, **options: object) -> bool:
        """Workers and parameter servers of parameter-server training serve the chief."""
        return uses_parameter_servers(info) and info.role in (WORKER, PS)

    def serve(self, info: ClusterInfo, stopped: threading.Event, **options: object) -> None:
        """Host this replica's tf.distribute.Server until the job ends."""
        from vtrain_tensorflow.servers import serve_until_stopped

        self.require("tensorflow")
        serve_until_stopped(info, stopped)

    def configure(
        self,
        info: ClusterInfo | None = None,
        *,
        wait: timedelta = DEFAULT_WAIT,
        environ: MutableMapping[str, str] | None = None,
    ) -> TensorFlowHandle:
        """Write TF_CONFIG, choose Keras, and return this replica's strategy in a handle.

        Call it first, before TensorFlow builds any strategy or model: TF reads
        TF_CONFIG once, when a strategy is built, and resolves `tf.keras` on its
        first use. On the workers and parameter servers of parameter-server
        training this never returns: they serve the chief until the job ends,
        then exit 0. A multi-worker worker waits up to `wait` for the chief.
        """
        env = os.environ if environ is None else environ
        info = info or ClusterInfo.from_env(env)
        if uses_parameter_servers(info) and not info.cluster.get(CHIEF):
            # Every worker would serve and none would coordinate: a job that never ends.
            raise ConfigError(
                "parameter-server training needs a chief to coordinate, and the cluster has none",
                source=info.source,
                value=sorted(info.cluster),
                expected="a chief (or master) beside the workers and parameter servers",
            )
        check_not_too_late(info)
        info = self.prepare(info, env)
        self.require("tensorflow")
        if info.role == WORKER and info.rank and info.chief_address:
            # MultiWorkerMirroredStrategy: the chief hosts the coordination service.
            host, port = split_address(info.chief_address, "TF_CONFIG: cluster.chief[0]")
            wait_for_chief(host, port, wait, source="TF_CONFIG: cluster.chief[0]")

        from vtrain_tensorflow.strategy import strategy_for

        return TensorFlowHandle(
            info=info,
            is_leader=self.leads(info, env),
            strategy=strategy_for(info),
            keras_version=chosen(info, env),
            environ=env,
        )
