"""A training script's progress, as its watchdog wrote it: run the script in a child process
with the watchdog on and a progress file, and read what the child's tracker and file said.

The child (a script under tests/<framework>/scripts/) trains, then calls `said()`: it
waits for the watchdog's thread to write the file with every mark made (it looks once a
second), and prints the tracker's marks and step beside the file's snapshot. A process of
its own for each run: the tracker and the watchdog are the process's, once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
PREFIX = "vtrain-progress "


def run(script: Path, args: list[str], tmp_path: Path, **env: str) -> dict[str, Any]:
    """Run `script ARGS` alone with its watchdog on; what `said()` printed, and the file's
    last snapshot (`after_close`: the watchdog's final write, at `handle.close()`)."""
    from cluster_run import clean_env

    from vtrain.progress.file import read

    path = tmp_path / "progress"
    done = subprocess.run(
        [sys.executable, str(script), *args],
        env=clean_env(
            VTRAIN_WATCHDOG="on",
            VTRAIN_PROGRESS_FILE=str(path),
            VTRAIN_OUTPUT_DIR=str(tmp_path / "out"),
            PYTHONPATH=os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
            **env,
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(PREFIX)]
    assert lines, done.stdout + done.stderr
    found: dict[str, Any] = json.loads(lines[-1][len(PREFIX) :])
    last = read(str(path))
    found["after_close"] = None if last is None else last._fields()
    return found


def said() -> None:
    """In the child: print the tracker's marks and step, and the progress file once the
    watchdog has written every mark made (within a few seconds)."""
    from vtrain.progress import tracker
    from vtrain.progress.file import read

    progress = tracker()
    path = os.environ["VTRAIN_PROGRESS_FILE"]
    deadline = time.monotonic() + 10
    snapshot = read(path)
    while snapshot is None or snapshot.marks != progress.marks or snapshot.rate is None:
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
        snapshot = read(path)
    seen = {"marks": progress.marks, "step": progress.step, "commit": progress.commit}
    seen["file"] = None if snapshot is None else snapshot._fields()
    print(PREFIX + json.dumps(seen), flush=True)
