"""What TensorFlow still prints at start-up after `configure()`: only what the docs name.

`configure()` sets TF_CPP_MIN_LOG_LEVEL=3 before TensorFlow loads. The lines its
native libraries print as they load come before their logging reads the variable;
docs/frameworks/tensorflow.md lists them as the ones nothing silences. A new line, or one the
variable should have silenced (`failed call to cuInit`), fails here, and the
page's account with it.
"""

from __future__ import annotations

import os
import subprocess
import sys

# Each native library prints these as it loads, before absl::InitializeLog().
UNSILENCEABLE = (
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.",
    "port.cc:153] oneDNN custom operations are on.",  # on CPUs where TF turns oneDNN on
)
START = """
import vtrain
vtrain.plugins.get("tensorflow").configure()
import tensorflow as tf
print(float(tf.reduce_sum(tf.constant([1.0, 2.0]))))
"""


def test_after_configure_only_the_lines_the_readme_names_are_printed() -> None:
    # As a user starts it: nothing set (tests/tensorflow's conftest sets the variable).
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "TF_CONFIG")}
    done = subprocess.run(
        [sys.executable, "-c", START], capture_output=True, text=True, env=env, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == "3.0\n"
    lines = done.stderr.splitlines()
    others = [line for line in lines if not any(known in line for known in UNSILENCEABLE)]
    assert others == [], done.stderr  # e.g. "failed call to cuInit", cpu_feature_guard
    # Once per native library: two, as the docs say.
    assert sum(UNSILENCEABLE[0] in line for line in lines) <= 2
