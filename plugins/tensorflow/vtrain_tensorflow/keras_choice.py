"""Which Keras `tf.keras` means: legacy tf-keras for distributed training, Keras 3 alone.

Keras 3 (the default `tf.keras` since TF 2.16) fails in `model.fit` under
MultiWorkerMirroredStrategy with two or more workers ("Attempt to convert a
value (PerReplica…) with an unsupported type", keras-team/keras#20585) and has
no SidecarEvaluator; tf-keras, selected by TF_USE_LEGACY_KERAS=1, trains
correctly. TensorFlow resolves `tf.keras` on its first use and reads the
variable then, so it must be set before that, ideally before `import tensorflow`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from vtrain import ClusterInfo, UsageError
from vtrain_tensorflow.internals import KERAS_3, LEGACY, keras_routing

VARIABLE = "TF_USE_LEGACY_KERAS"


def wanted(info: ClusterInfo) -> str:
    """tf_keras for any multi-replica cluster, keras_3 for a single process."""
    return LEGACY if info.is_distributed else KERAS_3


def resolved() -> str | None:
    """The Keras TensorFlow already routes `tf.keras` to, or None while it is not imported."""
    tf = sys.modules.get("tensorflow")
    return None if tf is None else keras_routing(tf)


def check_not_too_late(info: ClusterInfo) -> None:
    """Refuse a multi-replica cluster when TensorFlow already routes `tf.keras` to Keras 3."""
    if wanted(info) != LEGACY:
        return
    already = resolved()
    if already not in (None, LEGACY):
        raise UsageError(
            "TensorFlow was imported with Keras 3, which fails under multi-worker training",
            source="vtrain.plugins.get('tensorflow').configure()",
            value=already,
            expected="configure() before `import tensorflow`",
            hint=f"call configure() at the top of the script, before importing tensorflow, "
            f"or set {VARIABLE}=1 in the environment before Python starts",
        )


def chosen(info: ClusterInfo, environ: Mapping[str, str]) -> str:
    """The Keras in use: tf_keras on a cluster; alone, Keras 3 unless the user chose legacy."""
    if wanted(info) == LEGACY:
        return LEGACY
    return LEGACY if environ.get(VARIABLE, "") in ("1", "true", "True") else KERAS_3
