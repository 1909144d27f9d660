"""The "tensorflow" plugin: TF_CONFIG that TF2 accepts, the right Keras, the right strategy."""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import Any

from vtrain import ClusterInfo, ConfigError, RunContext
from vtrain.cluster import CHIEF, PS, WORKER
from vtrain.plugins.base import Plugin
from vtrain_tensorflow.handle import TensorFlowHandle
from vtrain_tensorflow.keras_choice import select_keras
from vtrain_tensorflow.tf_config import uses_parameter_servers, write_tf_config


class TensorFlowPlugin(Plugin):
    """TensorFlow and Keras from the platform's description."""

    name = "tensorflow"
    extra = "tensorflow"
    requires = ("tensorflow",)

    def configure(
        self,
        info: ClusterInfo | None = None,
        *,
        environ: MutableMapping[str, str] | None = None,
        **options: Any,
    ) -> TensorFlowHandle:
        """Write TF_CONFIG, choose Keras, and return this replica's strategy in a handle.

        Call it first, before TensorFlow builds any strategy or model: TF reads
        TF_CONFIG once, when a strategy is built, and resolves `tf.keras` on its
        first use. On the workers and parameter servers of parameter-server
        training this never returns: they serve the chief until the job ends,
        then exit 0.
        """
        self.reject_unknown(options, ("info", "environ"))
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
        write_tf_config(info, env)
        keras_version = select_keras(info, env)
        if uses_parameter_servers(info):
            # The coordinator should not fail a whole step when one worker is slow to answer.
            env.setdefault("GRPC_FAIL_FAST", "use_caller")
        self.require("tensorflow")
        if uses_parameter_servers(info) and info.role in (WORKER, PS):
            from vtrain_tensorflow.servers import serve_until_stopped

            serve_until_stopped(info)

        from vtrain_tensorflow.strategy import strategy_for

        return TensorFlowHandle(
            info=info,
            strategy=strategy_for(info),
            keras_version=keras_version,
            context=RunContext.from_env(env, trial_id=info.trial_id),
        )
