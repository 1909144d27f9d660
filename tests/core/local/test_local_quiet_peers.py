"""Quiet peers: once a replica is lost, a peer's traceback goes to its log; one line is shown."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from test_local_kill_peers import PEER

from vtrain.local.quiet import QUIET_SECONDS, TRACEBACK, Quiet

# The same job as test_local_kill_peers', but the chief's first run fails with a traceback.
LOUD_PEER = PEER.replace(
    'sys.exit("chief: my peer went away")', 'raise ConnectionError("my peer went away")'
)


def test_a_peer_s_traceback_after_a_kill_is_one_line_here_and_whole_in_its_log(
    vtrain: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    assert LOUD_PEER != PEER
    script = tmp_path / "peer.py"
    script.write_text(LOUD_PEER)
    done = vtrain(
        "--output-dir",
        str(tmp_path / "out"),
        "--workers",
        "1",
        "--kill",
        "worker:0@2",
        "--",
        sys.executable,
        str(script),
        str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [ln.split(" | ", 1) for ln in done.stdout.splitlines() if " | " in ln]
    chief = [text for name, text in lines if name.strip() == "chief-0"]
    assert chief == ["lost worker-0: exiting to restart (the traceback is in its log)"]
    assert "Traceback" not in done.stdout and "ConnectionError" not in done.stdout
    assert "chief-0 exited with 1, as expected after worker-0's kill" in done.stdout
    log = (tmp_path / "out" / "replica-logs" / "chief-0.log").read_text()
    assert TRACEBACK.decode() in log and "ConnectionError: my peer went away" in log


def test_only_a_peer_that_ran_before_the_loss_is_quiet_and_only_for_a_while() -> None:
    quiet = Quiet()
    line = b"Traceback (most recent call last):"
    assert quiet.sort("chief-0", 1.0, line, 2.0) == (True, None)  # nothing lost yet
    quiet.lost("worker-0", 5.0)
    assert quiet.sort("worker-1", 6.0, line, 7.0) == (True, None)  # started after the loss
    assert quiet.sort("worker-0", 1.0, line, 7.0) == (True, None)  # the lost one itself
    assert quiet.sort("chief-0", 1.0, b"epoch 3", 7.0) == (True, None)  # not a traceback
    show, first = quiet.sort("chief-0", 1.0, line, 7.0)
    assert not show and first == "lost worker-0: exiting to restart (the traceback is in its log)"
    assert quiet.sort("chief-0", 1.0, b"  File x", 8.0) == (False, None)
    show, first = quiet.sort("worker-1", 1.0, b"[rank2]: " + line, 8.0)  # torch's prefix
    assert not show and first is not None
    quiet.lost("chief-0", 9.0)  # the quiet peer's own exit: still worker-0's loss
    assert quiet.quiet("chief-0")
    # Still running long after: not on its way out; shown again, with a line that says so.
    show, first = quiet.sort("chief-0", 1.0, b"epoch 4", 7.0 + QUIET_SECONDS)
    assert show and first is not None and "its lines follow" in first
    assert quiet.sort("chief-0", 1.0, line, 30.0) == (True, None)
    quiet.restarted("chief-0")
    assert not quiet.quiet("chief-0")
