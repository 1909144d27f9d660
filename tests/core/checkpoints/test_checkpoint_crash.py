"""SIGKILL a saving process at random moments; only whole, committed steps may ever be seen."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

_HARNESS = Path(__file__).with_name("crash_child.py")
_spec = importlib.util.spec_from_file_location("vtrain_crash_child", _HARNESS)
assert _spec is not None and _spec.loader is not None
crash = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = crash  # dataclasses look their module up by name
_spec.loader.exec_module(crash)

# (kills, longest wait before a kill): enough that kills land inside saves and deletions,
# 10 on a local disk; a save on the emulator takes longer, so its waits do too. With
# background saves, 50 kills in all while a save is in flight. Each run draws a new seed;
# the campaign (`nox -s fuzz`, VTRAIN_FUZZ=1) kills ten times as often.
SCALE = 10 if os.environ.get("VTRAIN_FUZZ") == "1" else 1
KILLS = {
    "blocking": {"local": (10, 0.25), "fuse": (6, 0.25), "gcs": (4, 1.5)},
    "background": {"local": (25, 0.25), "fuse": (15, 0.25), "gcs": (10, 1.5)},
}


@pytest.mark.timeout(300 * SCALE)
@pytest.mark.parametrize("mode", ["blocking", "background"])
def test_kills_never_leave_a_partial_step(medium, mode: str) -> None:
    config = {"uri": medium.uri, "keep": 2, "keep_every": 4, **medium.options}
    config["async"] = mode == "background"
    seed = int.from_bytes(os.urandom(4), "big")
    kills, max_delay = KILLS[mode][medium.name]
    kills *= SCALE
    report = crash.run_kills(config, kills, seed=seed, max_delay=max_delay)
    print(f"{medium.name}, {mode}: seed {seed}, {report}")
    assert report.kills == kills
    assert report.steps_committed > 0
    if mode == "background":
        assert report.mid_save_kills > 0  # some kills did land while a save was in flight
