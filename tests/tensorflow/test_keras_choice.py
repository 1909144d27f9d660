"""The Keras `tf.keras` resolves to, chosen before TensorFlow uses it, in fresh interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from platform_examples import tf_config

DISTRIBUTED = tf_config({"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}, "worker", 0)


def python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "TF_USE_LEGACY_KERAS")}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**clean, "TF_CPP_MIN_LOG_LEVEL": "2", **env},
        timeout=120,
    )


SHOW = (
    "import json, vtrain\n"
    "from vtrain_tensorflow.keras_choice import select_keras\n"
    "from vtrain_tensorflow.tf_config import write_tf_config\n"
    "import os\n"
    "info = vtrain.ClusterInfo.from_env()\n"
    "write_tf_config(info, os.environ)\n"
    "chosen = select_keras(info, os.environ)\n"
    "import tensorflow as tf\n"
    "print(json.dumps([chosen, tf.keras.layers.Dense.__module__.split('.')[0]]))\n"
)


def test_multi_worker_gets_legacy_keras() -> None:
    done = python(SHOW, TF_CONFIG=DISTRIBUTED)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["tf_keras", "tf_keras"]


def test_a_single_process_keeps_keras_3() -> None:
    done = python(SHOW)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["keras_3", "keras"]


def test_tensorflow_imported_first_still_works_while_tf_keras_is_unused() -> None:
    done = python("import tensorflow as tf\n" + SHOW, TF_CONFIG=DISTRIBUTED)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["tf_keras", "tf_keras"]


def test_too_late_says_exactly_what_to_change() -> None:
    code = (
        "import tensorflow as tf\n"
        "tf.keras.layers.Dense(1)\n"  # tf.keras is now Keras 3, for good
        "import vtrain\n"
        "try:\n"
        "    vtrain.plugins.get('tensorflow').configure()\n"
        "except vtrain.UsageError as e:\n"
        "    print(e)\n"
    )
    done = python(code, TF_CONFIG=DISTRIBUTED)
    assert done.returncode == 0, done.stderr
    message = done.stdout.strip().splitlines()[-1]
    assert (
        "tf.keras was already used as Keras 3, which fails under multi-worker training" in message
    )
    assert "configure() before the first use of tf.keras" in message
    assert "set TF_USE_LEGACY_KERAS=1" in message
