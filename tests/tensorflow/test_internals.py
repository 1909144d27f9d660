"""The TensorFlow and Keras internals vtrain_tensorflow/internals.py reads are still there.

Each test names the private attribute, the version installed and the version it
was checked on, so that an upgrade that changes one fails here, in words, rather
than as a resume that silently drops an optimizer's state or a Keras check that
lets Keras 3 through. Fresh interpreters: which Keras `tf.keras` is, is fixed
once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CHECKED_ON = "TensorFlow 2.21.0, tf-keras 2.21.0, Keras 3.15.1"
HERE = "plugins/tensorflow/vtrain_tensorflow/internals.py"


def python(code: str, *, legacy: bool) -> dict[str, object]:
    """Run `code` in a fresh interpreter (tf.keras as `legacy` says); its last line, as JSON."""
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "TF_USE_LEGACY_KERAS")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    if legacy:
        env["TF_USE_LEGACY_KERAS"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return found


def changed(what: str, found: dict[str, object], why: str) -> str:
    return (
        f"{what} changed in TensorFlow {found['tensorflow']} / {found['keras']}: {why}. "
        f"{HERE} reads it and was checked on {CHECKED_ON}; make it follow the new version."
    )


ROUTING = """
import json, types, tensorflow as tf
from importlib.metadata import version
from vtrain_tensorflow.internals import keras_routing
loader = tf.__dict__.get("keras")
seen = {"tensorflow": tf.__version__, "keras": "tf-keras " + version("tf-keras")
        if %(legacy)r else "Keras " + version("keras")}
seen["class"] = type(loader).__name__
seen["uses_legacy"] = tf.__dict__.get("_tf_uses_legacy_keras", "missing")
seen["initialized_before"] = loader.__dict__.get("_tfll_initialized", "missing")
seen["before"] = keras_routing(tf)
dir(loader)  # the first use: the loader reads the variable and puts the module in its place
seen["initialized_after"] = loader.__dict__.get("_tfll_initialized", "missing")
seen["version_after"] = loader.__dict__.get("_tfll_keras_version", "missing")
seen["loaded"] = keras_routing(tf)
seen["through_the_loader"] = keras_routing(types.SimpleNamespace(keras=loader))
seen["package"] = tf.keras.layers.Dense.__module__.split(".")[0]
print(json.dumps(seen))
"""


@pytest.mark.parametrize(
    "legacy, expected, package", [(False, "keras_3", "keras"), (True, "tf_keras", "tf_keras")]
)
def test_keras_routing_reads_where_tensorflow_sends_tf_keras(
    legacy: bool, expected: str, package: str
) -> None:
    seen = python(ROUTING % {"legacy": legacy}, legacy=legacy)
    assert seen["class"] == "KerasLazyLoader", changed(
        "tf.keras before its first use", seen, f"it is a {seen['class']}, not a KerasLazyLoader"
    )
    assert seen["uses_legacy"] is legacy, changed(
        "tensorflow._tf_uses_legacy_keras", seen, f"it is {seen['uses_legacy']!r}, not {legacy}"
    )
    assert seen["initialized_before"] is False and seen["initialized_after"] is True, changed(
        "KerasLazyLoader._tfll_initialized",
        seen,
        f"{seen['initialized_before']!r} before the first use, "
        f"{seen['initialized_after']!r} after, not False and True",
    )
    assert seen["version_after"] == expected, changed(
        "KerasLazyLoader._tfll_keras_version", seen, f"it says {seen['version_after']!r}"
    )
    assert seen["package"] == package  # what the routing is about: the Keras tf.keras is
    assert (seen["before"], seen["loaded"], seen["through_the_loader"]) == (expected,) * 3


OPTIMIZER = """
import json, tensorflow as tf
from importlib.metadata import version
from vtrain_tensorflow.internals import optimizer_built
keras = tf.keras
seen = {"tensorflow": tf.__version__, "keras": "tf-keras " + version("tf-keras")
        if %(legacy)r else "Keras " + version("keras")}
model = keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
optimizer = model.optimizer
seen["before"] = optimizer_built(optimizer)
optimizer.build(model.trainable_variables)
seen["after"] = optimizer_built(optimizer)
seen["attribute"] = repr(getattr(optimizer, %(attribute)r, "missing"))
print(json.dumps(seen))
"""


@pytest.mark.parametrize("legacy, attribute", [(False, "built"), (True, "_built")])
def test_optimizer_built_tells_a_built_optimizer_from_a_new_one(
    legacy: bool, attribute: str
) -> None:
    seen = python(OPTIMIZER % {"legacy": legacy, "attribute": attribute}, legacy=legacy)
    # Without it, loading a checkpoint into a model that has not trained yet loads the
    # weights and drops the optimizer's state, with no more than a warning from Keras.
    assert seen["attribute"] == "True", changed(
        f"optimizer.{attribute}", seen, f"after build() it is {seen['attribute']}, not True"
    )
    assert (seen["before"], seen["after"]) == (False, True), changed(
        f"optimizer.{attribute}", seen, "optimizer_built no longer tells before from after build()"
    )
