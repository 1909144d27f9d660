"""The private attributes of TensorFlow and Keras that vtrain reads, each behind one function.

Neither library offers a public way to ask these questions. Checked on TensorFlow
2.21.0, tf-keras 2.21.0 and Keras 3.15.1; tests/tensorflow/test_internals.py fails,
naming the attribute and the versions, when an upgrade changes one of them.
"""

from __future__ import annotations

from typing import Any

LEGACY = "tf_keras"
KERAS_3 = "keras_3"
"""TensorFlow's own names for the two Keras it can route `tf.keras` to (its lazy loader's)."""

LAZY_LOADER = "KerasLazyLoader"
"""The class of `tf.keras` until first use; it then puts the chosen module in its place."""


def keras_routing(tf: Any) -> str:
    """LEGACY or KERAS_3: where an imported TensorFlow sends `tf.keras` and `tensorflow.keras`.

    `import tensorflow` fixes, from TF_USE_LEGACY_KERAS as it is then, where
    `from tensorflow.keras import …` leads (`tf._tf_uses_legacy_keras`); `tf.keras`
    is a lazy loader that reads the variable again on first use
    (`_tfll_initialized`, `_tfll_keras_version`) and then replaces itself.
    """
    keras = tf.__dict__.get("keras")
    if type(keras).__name__ == LAZY_LOADER:
        if keras.__dict__.get("_tfll_initialized"):
            return str(keras.__dict__.get("_tfll_keras_version"))
    elif keras is not None:
        return LEGACY if keras.__name__.startswith("tf_keras") else KERAS_3
    return LEGACY if tf.__dict__.get("_tf_uses_legacy_keras") else KERAS_3


def optimizer_built(optimizer: Any) -> bool:
    """True once `optimizer` has its slot variables: Keras 3 says `built`, tf-keras `_built`."""
    return bool(getattr(optimizer, "built", False) or getattr(optimizer, "_built", False))
