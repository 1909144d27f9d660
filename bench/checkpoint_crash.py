"""The crash test at scale: SIGKILL a saving process 200 times per medium, check every time.

    python bench/checkpoint_crash.py                  # 200 local, 200 FUSE-treated, 50 gs:// kills
    python bench/checkpoint_crash.py --local 500 --fuse 0 --gcs 0

Each medium runs twice: blocking saves, then background ones (`blocking=False`,
the child scribbling over its buffers as soon as `save` returns).

After each kill, `latest_step()` and `restore()` must return the last committed
step with intact contents, and every step the run could have touched must
restore whole (the harness in tests/core/checkpoints/crash_child.py asserts it).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from checkpoints import emulator  # noqa: E402

_HARNESS = Path(__file__).parents[1] / "tests" / "core" / "checkpoints" / "crash_child.py"


def _harness() -> Any:
    spec = importlib.util.spec_from_file_location("vtrain_crash_child", _HARNESS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--local", type=int, default=200)
    parser.add_argument("--fuse", type=int, default=200)
    parser.add_argument("--gcs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "big"))
    args = parser.parse_args()
    crash = _harness()
    root = tempfile.mkdtemp(prefix="vtrain-crash-")
    retention = {"keep": 2, "keep_every": 4}
    try:
        runs: list[tuple[str, int, dict[str, Any], float]] = [
            ("local disk", args.local, {"uri": f"{root}/local", **retention}, 0.25),
            ("FUSE semantics", args.fuse, {"uri": f"{root}/fuse", "fuse": True, **retention}, 0.25),
        ]
        for label, kills, base, delay in runs:
            for mode in ("blocking", "background") if kills else ():
                config = {**base, "uri": f"{base['uri']}-{mode}", "async": mode == "background"}
                report = crash.run_kills(config, kills, seed=args.seed, max_delay=delay)
                print(f"{label:<16} {mode:<10} {report}")
        if args.gcs:
            with emulator() as host:
                from vtrain.storage import storage_client

                env = {"STORAGE_EMULATOR_HOST": host}
                storage_client(env).create_bucket("vtrain-crash")
                for mode in ("blocking", "background"):
                    config = {"uri": f"gs://vtrain-crash/{mode}", "environ": env, **retention}
                    config.update(gcs_mount="/nonexistent", **{"async": mode == "background"})
                    report = crash.run_kills(config, args.gcs, seed=args.seed, max_delay=1.5)
                    print(f"{'gs:// emulator':<16} {mode:<10} {report}")
        print(f"seed {args.seed}: no partial step, no error, after every kill")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
