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
from collections.abc import MutableMapping

from vtrain import ClusterInfo, UsageError

VARIABLE = "TF_USE_LEGACY_KERAS"
LEGACY = "tf_keras"
KERAS_3 = "keras_3"


def wanted(info: ClusterInfo) -> str:
    """tf_keras for any multi-replica cluster, keras_3 for a single process."""
    return LEGACY if info.is_distributed else KERAS_3


def resolved() -> str | None:
    """The Keras `tf.keras` already points to, or None while it is unresolved."""
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return None
    keras = tf.__dict__.get("keras")
    if keras is None:
        return None
    if type(keras).__name__ == "KerasLazyLoader":
        if not keras.__dict__.get("_tfll_initialized", False):
            return None
        return str(keras.__dict__.get("_tfll_keras_version"))
    # Once loaded, the lazy loader replaces itself with the module it chose.
    return LEGACY if keras.__name__.startswith("tf_keras") else KERAS_3


def select_keras(info: ClusterInfo, environ: MutableMapping[str, str]) -> str:
    """Route `tf.keras` to the Keras that works for this cluster; refuse if it is too late."""
    if wanted(info) == LEGACY:
        already = resolved()
        if already not in (None, LEGACY):
            raise UsageError(
                "tf.keras was already used as Keras 3, which fails under multi-worker training",
                source="vtrain.plugins.get('tensorflow').configure()",
                value=already,
                expected="configure() before the first use of tf.keras",
                hint=f"call configure() at the top of the script, before building any model, "
                f"or set {VARIABLE}=1 in the environment before Python starts",
            )
        environ[VARIABLE] = "1"
        return LEGACY
    # A single process keeps Keras 3, unless the user chose legacy Keras explicitly.
    return LEGACY if environ.get(VARIABLE, "") in ("1", "true", "True") else KERAS_3
