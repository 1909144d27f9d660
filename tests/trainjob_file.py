"""A framework's job as the TrainJob `vtrain render kubeflow --trainjob` writes, for a rehearsal.

Each framework session rehearses its example from that very file (`vtrain local run
--job`), as a user rehearses what they will submit: the runtime the framework's
plugin names, the nodes, vtrain's layout for TensorFlow's and MXNet's roles.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from cluster_run import clean_env


def trainjob(out: Path, framework: str, topology: list[str], command: list[str]) -> list[str]:
    """Render `python COMMAND` as `framework`'s TrainJob in `out`; the options that rehearse it
    (the local interpreter then runs the file's script: `local_run(out, options, [])`)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "trainjob.json"
    done = subprocess.run(
        [sys.executable, "-m", "vtrain", "render", "kubeflow", "--framework", framework,
         "--trainjob", *topology, "--image", "gcr.io/p/trainer:1", "--name", "rehearsed",
         "--format", "json", "-o", str(path), "--", "python", *command],
        env=clean_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return ["--job", str(path)]


def read(options: list[str]) -> dict[str, Any]:
    """The TrainJob that `trainjob` wrote."""
    document: dict[str, Any] = json.loads(Path(options[1]).read_text())
    return document


STATUS = "TrainJob status (status.trainerStatus): progressPercentage 100"
"""The summary's line once the leader's last post said the job ended well (a loop that
gave its total steps)."""


def posted(output: str) -> str:
    """The summary's TrainJob status line: posts went through, and none was refused."""
    found = re.search(r"^TrainJob status \(status.trainerStatus\): (.*)$", output, re.MULTILINE)
    assert found, output
    assert "metrics step=" in found[1] and "refused" not in found[1], found[1]
    return found[1]
