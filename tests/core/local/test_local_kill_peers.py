"""A --kill explains what follows it: its peers failing too is expected, and they restart."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

# worker-0's first run waits to be killed; the chief's first run fails when worker-0 dies, as
# a collective's peer does; every later run succeeds at once.
PEER = """\
import os, sys, time
from pathlib import Path
import vtrain

info = vtrain.ClusterInfo.from_env()
folder = Path(sys.argv[1])
me = folder / f"{info.role}-{info.index}"
first = not me.exists()
me.touch()
pid = folder / "worker.pid"
if first and info.role == "worker":
    (folder / "pid.tmp").write_text(str(os.getpid()))
    os.replace(folder / "pid.tmp", pid)
    time.sleep(60)
if first and info.role == "chief":
    while not pid.exists():
        time.sleep(0.05)
    stat = Path(f"/proc/{pid.read_text()}/stat")
    while stat.exists() and stat.read_text().split(") ")[1][0] != "Z":  # a zombie is gone
        time.sleep(0.05)
    sys.exit("chief: my peer went away")
"""


def test_a_peer_that_fails_after_the_kill_is_said_to_be_expected(
    vtrain: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    script = tmp_path / "peer.py"
    script.write_text(PEER)
    done = vtrain(
        "--workers", "1", "--kill", "worker:0@2", "--", sys.executable, str(script), str(tmp_path)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    notes = [
        line.split("| ", 1)[1] for line in done.stdout.splitlines() if line.startswith("vtrain ")
    ]
    assert (
        "--kill worker:0@2:KILL: sending SIGKILL to worker-0; "
        "replicas that train with it are expected to fail too, and restart"
    ) in notes
    assert "chief-0 exited with 1, as expected after worker-0's kill; restart 1 of 5" in notes
    assert "worker-0 was killed (--kill); restart 1 of 5" in notes
