"""`import vtrain` in a fresh interpreter loads no framework and reads no environment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FRAMEWORKS = (
    "tensorflow",
    "torch",
    "mxnet",
    "xgboost",
    "keras",
    "lightning",
    "numpy",
    "google.cloud.storage",
    "optuna",
    "yaml",
)


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


# Each costs milliseconds, and `vtrain local run` needs none of them to start its replicas: the
# verdict's checks, the redaction patterns (compiled once the replicas run), help-text
# formatting (`shutil`), `socket`'s enums (the keeper uses `_socket`), `typing`.
LATER = ("vtrain.local.checks", "vtrain.redact", "shutil", "socket", "typing", "dataclasses")


def test_a_local_job_starts_its_replicas_before_the_imports_it_can_do_later(
    tmp_path: Path,
) -> None:
    # Before its first replica starts, the launcher runs alone on one core: bench/local_cluster.py.
    code = (
        "import json, sys\n"
        "import vtrain.local.keeper as keeper\n"
        "ask = keeper.Keeper.spawn\n"
        "def spawn(self, starts):\n"
        "    if not getattr(spawn, 'seen', None):\n"
        "        spawn.seen = sorted(sys.modules)\n"
        "        open(sys.argv[1], 'w').write(json.dumps(spawn.seen))\n"
        "    return ask(self, starts)\n"
        "keeper.Keeper.spawn = spawn\n"
        "from vtrain.cli import main\n"
        "sys.exit(main(['local', 'run', '--workers', '1', '--output-dir', sys.argv[2],\n"
        "               '--', sys.executable, '-c', 'pass']))\n"
    )
    seen = tmp_path / "modules.json"
    subprocess.run(
        [sys.executable, "-c", code, str(seen), str(tmp_path / "out")],
        capture_output=True,
        cwd=tmp_path,
        check=True,
        timeout=60,
    )
    loaded = set(json.loads(seen.read_text()))
    assert "vtrain.local.supervisor" in loaded  # the probe saw the launcher's own start
    assert [m for m in LATER if m in loaded] == []
