"""Fixtures for the Keras checkpoint tests: a handle configured in-process, the GCS emulator."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from watchdogs import _stop_the_watchdog_a_test_started  # noqa: F401  (autouse)

# The core tests' emulator fixture, reused rather than copied: one way to start it.
_CORE = Path(__file__).resolve().parents[1] / "core" / "conftest.py"
_spec = importlib.util.spec_from_file_location("vtrain_core_test_fixtures", _CORE)
assert _spec is not None and _spec.loader is not None
core_fixtures = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = core_fixtures  # dataclasses look their module up by name
_spec.loader.exec_module(core_fixtures)
gcs_emulator = core_fixtures.gcs_emulator

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def configure(**environ: str) -> Any:
    """A single-process TensorFlow handle configured from `environ` alone (Keras 3)."""
    import vtrain

    return vtrain.plugins.get("tensorflow").configure(environ=dict(environ))


@pytest.fixture
def handle(tmp_path: Path) -> Any:
    """This process's handle, its output (and checkpoint folder) under tmp_path/out."""
    return configure(VTRAIN_OUTPUT_DIR=str(tmp_path / "out"))
