"""One replica of a relay job: the plugin is registered at runtime, then configured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import relay_plugin

import vtrain

vtrain.plugins.register("relay", relay_plugin.RelayPlugin)
info = vtrain.ClusterInfo.from_env()
if info.role == "chief":
    time.sleep(float(os.environ.get("RELAY_CHIEF_DELAY", "0")))  # a coordinator that is late

with vtrain.plugins.get("relay").configure() as handle:
    # Only workers get here: the coordinator and the servers serve, then exit.
    total = handle.add(handle.info.index + 1)
    reported = vtrain.hypertune.report(float(total), step=1)
    vtrain.CheckpointManager().save(1, {"writer": f"{handle.role}-{handle.info.index}".encode()})
    child = subprocess.run(
        [sys.executable, "-c", "import vtrain; print(vtrain.CheckpointManager().is_leader)"],
        capture_output=True,
        text=True,
        check=True,
    )
    print(
        "relay "
        + json.dumps(
            {
                "is_leader": handle.is_leader,
                "reported": reported,
                "waited": handle.waited,
                "child_is_leader": child.stdout.strip() == "True",
                "total": total,
            }
        ),
        flush=True,
    )
