"""The Keras `tf.keras` resolves to, chosen before TensorFlow uses it, in fresh interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from platform_examples import tf_config

DISTRIBUTED = tf_config({"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}, "worker", 0)
# The evaluator of that job: configure() returns at once, with no chief to wait for.
EVALUATOR = tf_config({"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}, "evaluator", 0)


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
    "handle = vtrain.plugins.get('tensorflow').configure()\n"
    "import tensorflow as tf\n"
    "print(json.dumps([handle.keras_version, tf.keras.layers.Dense.__module__.split('.')[0]]))\n"
)


def test_multi_worker_gets_legacy_keras() -> None:
    done = python(SHOW, TF_CONFIG=EVALUATOR)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["tf_keras", "tf_keras"]


def test_a_single_process_keeps_keras_3() -> None:
    done = python(SHOW)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["keras_3", "keras"]


def test_tensorflow_imported_first_works_when_legacy_keras_was_chosen_in_time() -> None:
    done = python("import tensorflow as tf\n" + SHOW, TF_CONFIG=EVALUATOR, TF_USE_LEGACY_KERAS="1")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["tf_keras", "tf_keras"]


@pytest.mark.parametrize(
    "before",
    [
        "import tensorflow as tf\n",  # `from tensorflow.keras import …` is Keras 3 from now on
        "import tensorflow as tf\ntf.keras.layers.Dense(1)\n",  # and so is tf.keras
    ],
)
def test_too_late_says_exactly_what_to_change(before: str) -> None:
    code = before + (
        "import vtrain\n"
        "try:\n"
        "    vtrain.plugins.get('tensorflow').configure()\n"
        "except vtrain.UsageError as e:\n"
        "    print(e)\n"
    )
    done = python(code, TF_CONFIG=DISTRIBUTED)
    assert done.returncode == 0, done.stderr
    message = done.stdout.strip().splitlines()[-1]
    assert "TensorFlow was imported with Keras 3, which fails under multi-worker" in message
    assert "configure() before `import tensorflow`" in message
    assert "set TF_USE_LEGACY_KERAS=1" in message
