"""vtrain's TensorFlow and Keras plugin: `vtrain.plugins.get("tensorflow").configure()`.

Importing this package imports no TensorFlow: TF_CONFIG and the Keras choice
must be in place before TensorFlow loads.
"""

from vtrain_tensorflow.handle import TensorFlowHandle
from vtrain_tensorflow.plugin import TensorFlowPlugin
from vtrain_tensorflow.strategy import cluster_resolver
from vtrain_tensorflow.tf_config_writer import tf_config_for

__all__ = ["TensorFlowHandle", "TensorFlowPlugin", "cluster_resolver", "tf_config_for"]
