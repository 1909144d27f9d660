"""Run a script on a real local cluster (`vtrain local run`) and read what each replica printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@dataclass
class Run:
    """A finished local job: its exit status, its output and each replica's log."""

    returncode: int
    output: str
    logs: dict[str, str]
    out: Path

    def last(self, replica: str, prefix: str) -> str:
        """The text after `prefix` on the last line of `replica`'s log that starts with it."""
        lines = [ln for ln in self.logs[replica].splitlines() if ln.startswith(prefix)]
        assert lines, f"{replica} never printed {prefix!r}:\n{self.logs[replica][-3000:]}"
        return lines[-1][len(prefix) :].strip()

    def params(self, replica: str) -> list[float]:
        """The final parameters `replica` printed."""
        return list(json.loads(self.last(replica, "final parameters")))


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any cluster variable, plus `extra`."""
    cluster = (
        "CLUSTER_SPEC",
        "TF_CONFIG",
        "RANK",
        "WORLD_SIZE",
        "MASTER_ADDR",
        "MASTER_PORT",
        "LOCAL_RANK",
        "TORCHELASTIC_RUN_ID",
        "TF_USE_LEGACY_KERAS",
    )
    env = {k: v for k, v in os.environ.items() if k not in cluster and not k.startswith("AIP_")}
    # TF_CPP_MIN_LOG_LEVEL: TensorFlow's C++ logging would bury the lines the tests read.
    return {**env, "PYTHONUNBUFFERED": "1", "TF_CPP_MIN_LOG_LEVEL": "2", **extra}


def local_run(
    out: Path, options: list[str], command: list[str], *, timeout: float = 300, **env: str
) -> Run:
    """`vtrain local run OPTIONS -- python COMMAND` with its output folder at `out`."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--output-dir",
            str(out),
            *options,
            "--",
            sys.executable,
            *command,
        ],
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    logs = {p.stem: p.read_text() for p in (out / "replica-logs").glob("*.log")}
    return Run(done.returncode, done.stdout + done.stderr, logs, out)


def run_alone(out: Path, command: list[str], *, timeout: float = 300) -> str:
    """Run `python COMMAND` as a single process (nothing set); return its output."""
    done = subprocess.run(
        [sys.executable, *command],
        env=clean_env(VTRAIN_OUTPUT_DIR=str(out), CLOUD_ML_HP_METRIC_FILE=str(out / "m")),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def final_parameters(output: str) -> list[float]:
    """The parameters a run alone printed last ("final parameters [...]"), as numbers.

    Only that line: an example run by hand then says where its outputs went.
    """
    return list(json.loads(output.split("final parameters")[-1].splitlines()[0]))
