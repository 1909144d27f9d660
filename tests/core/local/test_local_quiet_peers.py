"""Quiet peers: once a replica is lost, a peer's traceback goes to its log; one line is shown."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_local_kill_peers import PEER

from vtrain.local.quiet import (
    HELD_LINES,
    QUIET_SECONDS,
    TRACEBACK,
    Quiet,
    exceptions,
    own_failure,
)

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
    peer = b"ConnectionError: my peer went away"
    lost = "lost worker-0: exiting to restart (the traceback is in its log)"
    assert quiet.sort("chief-0", 1.0, line, 2.0) == (None, (line,))  # nothing lost yet
    quiet.lost("worker-0", 5.0)
    assert quiet.sort("worker-1", 6.0, line, 7.0) == (None, (line,))  # started after the loss
    assert quiet.sort("worker-0", 1.0, line, 7.0) == (None, (line,))  # the lost one itself
    assert quiet.sort("chief-0", 1.0, b"epoch 3", 7.0) == (None, (b"epoch 3",))  # no traceback
    # Held to its exception line, which says whose failure it is: here the loss's.
    assert quiet.sort("chief-0", 1.0, line, 7.0) == (None, ())
    assert quiet.sort("chief-0", 1.0, b'  File "x.py", line 1', 7.0) == (None, ())
    assert quiet.sort("chief-0", 1.0, peer, 7.0) == (lost, ())
    assert quiet.sort("chief-0", 1.0, b"  File x", 8.0) == (None, ())
    assert quiet.sort("worker-1", 1.0, b"[rank2]: " + line, 8.0) == (None, ())  # torch's prefix
    assert quiet.sort("worker-1", 1.0, b"[rank2]: " + peer, 8.0) == (lost, ())
    quiet.lost("chief-0", 9.0)  # the quiet peer's own exit: still worker-0's loss
    assert quiet.quiet("chief-0")
    # Still running long after: not on its way out; shown again, with a line that says so.
    first, shown = quiet.sort("chief-0", 1.0, b"epoch 4", 7.0 + QUIET_SECONDS)
    assert shown == (b"epoch 4",) and first is not None and "its lines follow" in first
    assert quiet.sort("chief-0", 1.0, line, 30.0) == (None, (line,))
    quiet.restarted("chief-0")
    assert not quiet.quiet("chief-0")


MISSING = b"ModuleNotFoundError: No module named 'trainer'"
LOST_TAIL = (b"Traceback (most recent call last):", b'  File "task.py", line 1', MISSING)


@pytest.mark.parametrize(
    ("exception", "lost", "own"),
    [
        # The program could not load: no peer did that, whatever the lost one died of.
        (MISSING, frozenset(), True),
        (b"ImportError: cannot import name 'x'", frozenset({b"KeyError: 'y'"}), True),
        (b"[rank0]: SyntaxError: invalid syntax".partition(b": ")[2], frozenset(), True),
        # The very failure the lost one died of: the same code, the same bug, in both.
        (b"KeyError: 'label'", frozenset({b"KeyError: 'label'"}), True),
        # Anything else, after a loss: the loss's.
        (b"KeyError: 'label'", frozenset({b"KeyError: 'other'"}), False),
        (b"RuntimeError: [gloo] Connection closed by peer", frozenset({MISSING}), False),
        (b"torch.distributed.DistBackendError: NCCL error", frozenset(), False),
        (b"ConnectionError: my peer went away", frozenset(), False),
    ],
)
def test_whose_failure_a_peer_s_traceback_is(
    exception: bytes, lost: frozenset[bytes], own: bool
) -> None:
    assert own_failure(exception, lost) is own


@pytest.mark.parametrize(
    ("tail", "found"),
    [
        (LOST_TAIL, {MISSING}),
        (
            [
                b"[rank1]: Traceback (most recent call last):",
                b"[rank1]:   File x",
                b"[rank1]: E: x",
            ],
            {b"E: x"},
        ),
        ([b"epoch 1", b"KeyError: 'not in a traceback'"], set()),
        (
            [
                *LOST_TAIL,
                b"",
                b"During handling of the above exception, another exception occurred:",
                b"",
                b"Traceback (most recent call last):",
                b"  File y",
                b"OSError: z",
            ],
            {MISSING, b"OSError: z"},
        ),
    ],
)
def test_the_exceptions_a_run_ended_with(tail: list[bytes], found: set[bytes]) -> None:
    assert exceptions(tail) == found


def test_a_peer_that_failed_as_the_lost_one_did_shows_its_own_traceback() -> None:
    # Issue 42: both replicas failed on their own ModuleNotFoundError; worker-0 was said to
    # have lost chief-0.
    quiet = Quiet()
    quiet.lost("chief-0", 5.0, LOST_TAIL)
    for line in LOST_TAIL[:-1]:
        assert quiet.sort("worker-0", 1.0, line, 6.0) == (None, ())
    assert quiet.sort("worker-0", 1.0, MISSING, 6.0) == (None, LOST_TAIL)
    assert not quiet.quiet("worker-0")
    assert quiet.sort("worker-0", 1.0, b"after", 6.0) == (None, (b"after",))


# Both replicas' first runs fail on the same missing module, worker-0's once the chief's
# failure is behind it; every later run succeeds at once.
BOTH_MISSING = """\
import os, sys, time
from pathlib import Path
import vtrain

info = vtrain.ClusterInfo.from_env()
folder = Path(sys.argv[1])
me = folder / f"{info.role}-{info.index}"
first = not me.exists()
me.touch()
pid = folder / "chief.pid"
if first and info.role == "chief":
    (folder / "pid.tmp").write_text(str(os.getpid()))
    os.replace(folder / "pid.tmp", pid)
    import trainer_that_is_not_there
if first and info.role == "worker":
    while not pid.exists():
        time.sleep(0.05)
    stat = Path(f"/proc/{pid.read_text()}/stat")
    while stat.exists() and stat.read_text().split(") ")[1][0] != "Z":
        time.sleep(0.05)
    time.sleep(1)  # vtrain has taken in the chief's exit: its loss
    import trainer_that_is_not_there
if not first:
    (folder / f"{info.role}-{info.index}.again").touch()
if not first and info.role == "chief":
    # Not done before the worker has failed and restarted: the chief's success would stop it
    # before its own failure (a busy machine's start of the restarted chief is quick).
    deadline = time.monotonic() + 60
    while not (folder / "worker-0.again").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
"""


def test_replicas_that_fail_on_their_own_are_not_said_to_have_lost_each_other(
    vtrain: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    script = tmp_path / "both.py"
    script.write_text(BOTH_MISSING)
    done = vtrain("--workers", "1", "--", sys.executable, str(script), str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "lost chief-0" not in done.stdout, done.stdout
    shown = [line for line in done.stdout.splitlines() if line.startswith("worker-0 ")]
    missing = "ModuleNotFoundError: No module named 'trainer_that_is_not_there'"
    assert any(line.endswith(missing) for line in shown), done.stdout
    assert any("Traceback (most recent call last):" in line for line in shown), done.stdout


def test_a_traceback_with_no_exception_line_of_its_own_is_a_peer_s() -> None:
    quiet = Quiet()
    quiet.lost("chief-0", 5.0, LOST_TAIL)
    lost = "lost chief-0: exiting to restart (the traceback is in its log)"
    # An exception group's lines are all indented: said at once, as before.
    group = b"  + Exception Group Traceback (most recent call last):"
    assert quiet.sort("worker-0", 1.0, group, 6.0) == (lost, ())
    # One that never reaches its exception line is not held for ever.
    quiet.restarted("worker-0")
    assert quiet.sort("worker-0", 1.0, TRACEBACK, 6.0) == (None, ())
    for _ in range(HELD_LINES - 2):
        assert quiet.sort("worker-0", 1.0, b"  File x", 6.0) == (None, ())
    assert quiet.sort("worker-0", 1.0, b"  File x", 6.0) == (lost, ())
