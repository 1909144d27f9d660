"""The distribution strategy each role trains with, and a ClusterResolver from ClusterInfo."""

from __future__ import annotations

from typing import Any

from vtrain import ClusterInfo
from vtrain.cluster import CHIEF, WORKER
from vtrain_tensorflow.tf_config_writer import (
    cluster_spec_dict,
    tf_config_for,
    uses_parameter_servers,
)


def cluster_resolver(info: ClusterInfo, *, gpus: int | None = None) -> Any:
    """A SimpleClusterResolver for this replica of `info`, or None for a single process.

    For code that builds its own strategy; it holds exactly what `configure`
    writes to TF_CONFIG, and this machine's GPU count (`gpus`, default: the GPUs
    TensorFlow sees). MultiWorkerMirroredStrategy asks any resolver but TF_CONFIG's
    for that count, and without it every worker would train on its CPU.
    """
    import tensorflow as tf

    config = tf_config_for(info)
    if config is None:
        return None
    if gpus is None:
        gpus = len(tf.config.list_physical_devices("GPU"))
    return tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster_spec_dict(config)),
        task_type=info.role,
        task_id=info.index,
        rpc_layer="grpc",
        num_accelerators={"GPU": gpus} if gpus else None,
    )


def strategy_for(info: ClusterInfo) -> Any:
    """The strategy this replica runs `fit` under.

    Parameter servers in the cluster: ParameterServerStrategy, the chief as its
    coordinator. Otherwise several trainers: MultiWorkerMirroredStrategy. One
    trainer, or an evaluator: the default strategy.
    """
    import tensorflow as tf

    alone = info.num_trainers < 2 and not uses_parameter_servers(info)
    if info.role not in (CHIEF, WORKER) or alone:
        return tf.distribute.get_strategy()
    resolver = cluster_resolver(info)
    if uses_parameter_servers(info):
        return tf.distribute.ParameterServerStrategy(resolver)
    return tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)
