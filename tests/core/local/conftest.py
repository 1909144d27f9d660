"""Shared helpers for the `vtrain local` tests: run the CLI, and prove no process is left.

Every process a test starts carries a marker variable that vtrain passes on to
the replicas and they to their children; after each test no live process may
still carry it. That catches a replica, a child it forked, or vtrain itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from local_procs import MARK, VTRAIN, marked

from vtrain.cli.local import console_notes


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


@pytest.fixture(autouse=True)
def console() -> Iterator[None]:
    """vtrain's notes of an in-process job on its stream, as `vtrain local run` shows them."""
    with console_notes():
        yield


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
