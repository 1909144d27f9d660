"""`import vtrain` in a fresh interpreter loads no framework and reads no environment."""

from __future__ import annotations

import json
import subprocess
import sys

FRAMEWORKS = ("tensorflow", "torch", "mxnet", "xgboost", "keras", "lightning", "numpy",
              "google.cloud.storage", "optuna", "yaml")  # fmt: skip


def test_import_vtrain_loads_no_framework() -> None:
    code = (
        "import sys, json, vtrain, vtrain.plugins, vtrain.cli\n"
        "vtrain.ClusterInfo.from_env(); vtrain.RunContext.from_env(); vtrain.plugins.available()\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    assert not [f for f in FRAMEWORKS if f in loaded or any(m.startswith(f + ".") for m in loaded)]


def test_nothing_is_read_at_import_time() -> None:
    # A broken variable must not break `import vtrain`; it fails only when read.
    code = (
        "import vtrain\n"
        "try:\n vtrain.ClusterInfo.from_env()\n"
        "except vtrain.ConfigError: print('late')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"CLUSTER_SPEC": "{", "PATH": ""},
        check=True,
    )
    assert done.stdout.strip() == "late"


def test_reading_the_cluster_stays_off_the_slow_stdlib_imports() -> None:
    # `dataclasses` (through `inspect`) and `typing` cost more than the rest of
    # ClusterInfo.from_env() together; every replica pays start-up (bench/cluster_info.py).
    code = (
        "import sys, vtrain\n"
        "vtrain.ClusterInfo.from_env(); vtrain.RunContext.from_env()\n"
        "print(' '.join(m for m in ('dataclasses', 'inspect', 'typing') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == ""
