"""Shared helpers for the `vtrain local` tests: run the CLI, and prove no process is left.

Every process a test starts carries a marker variable that vtrain passes on to
the replicas and they to their children; after each test no live process may
still carry it. That catches a replica, a child it forked, or vtrain itself.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

MARK = "VTRAIN_LOCAL_TEST_MARK"
REPLICA = str(Path(__file__).parent / "replicas" / "replica.py")
VTRAIN = [sys.executable, "-m", "vtrain", "local", "run"]


def marked(mark: str) -> list[int]:
    """Live (not zombie) processes whose environment carries the marker `mark`."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def group_alive(pgid: int) -> bool:
    """True while any live process is in process group `pgid`."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                return True
    return False


def starts(out: Path, name: str) -> list[dict[str, Any]]:
    """The start records replica `name` wrote, one per start."""
    path = out / "starts" / name
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(autouse=True)
def mark() -> Iterator[str]:
    """A marker for this test's processes; fails the test if any outlives it."""
    value = uuid.uuid4().hex
    yield value
    # SIGKILLed grandchildren die asynchronously: give the kernel a moment to finish them.
    left = marked(value)
    for _ in range(40):
        if not left:
            break
        time.sleep(0.05)
        left = marked(value)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"


@pytest.fixture
def env(mark: str) -> dict[str, str]:
    """The environment to start vtrain with: ours, plus the marker."""
    return {**os.environ, MARK: mark, "NO_COLOR": "1"}


@pytest.fixture
def vtrain(env: dict[str, str], tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `vtrain local run ARGS` in `tmp_path`; returns the finished process."""

    def run(*args: str, timeout: float = 60, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*VTRAIN, *args],
            cwd=tmp_path,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
