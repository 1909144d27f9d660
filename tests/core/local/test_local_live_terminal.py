"""`vtrain local run` as a person sees it: the live view on a real terminal (tmux), read from
the screen, and the console without one (a pipe): progress lines, no framework noise.

The replicas are trainers under the plugin contract (replicas/stepper.py): their watchdog
writes the progress files the view reads.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from local_procs import MARK, VTRAIN

sys.path.insert(0, str(Path(__file__).parent / "replicas"))
from stepper import NOISE_LINES, SHOWN_LINES  # noqa: E402

STEPPER = str(Path(__file__).parent / "replicas" / "stepper.py")
REPLICAS = ("chief-0", "worker-0", "worker-1")
# A row of the view: name, step, steps/s, commit, idle, state.
_ROW = r"{name}\s+(?P<step>\d+)\s+(?P<rate>[\d.]+)\s+-\s+[\d.]+ s\s+training"


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """`tmux ARGS` on a server of this test's own; the server ends with the test."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    socket = str(tmp_path / "tmux.sock")

    def run(*args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", socket, *args], capture_output=True, text=True, timeout=10
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    yield run
    subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=10)


def test_on_a_terminal_the_live_view_shows_a_row_per_replica_then_leaves_a_clean_screen(
    tmux: Callable[..., str], tmp_path: Path, mark: str
) -> None:
    out = tmp_path / "out"
    command = [*VTRAIN, "--output-dir", str(out), "--workers", "2", "--", sys.executable]
    command += [STEPPER, "--steps", "80", "--delay", "0.1", "--noise"]
    # Only vtrain and its replicas carry the marker: the shell stays for the screen's sake.
    script = tmp_path / "job.sh"
    script.write_text(
        f"cd {shlex.quote(str(tmp_path))}\n"
        f"env {MARK}={mark} NO_COLOR=1 TERM=xterm {shlex.join(command)}\n"
        "echo vtrain-exit=$?\nsleep 120\n"
    )
    tmux("new-session", "-d", "-s", "job", "-x", "160", "-y", "40", f"bash {script}")
    rows: dict[str, re.Match[str]] = {}
    screen = ""
    deadline = time.monotonic() + 25
    while len(rows) < len(REPLICAS) and time.monotonic() < deadline:
        time.sleep(0.2)
        screen = tmux("capture-pane", "-p", "-t", "job")
        rows = {
            name: found
            for name in REPLICAS
            if (found := re.search(_ROW.format(name=name), screen)) is not None
        }
        if "vtrain-exit=" in screen:
            break
    assert len(rows) == len(REPLICAS), screen
    lines = screen.rstrip("\n").splitlines()
    # The view is at the bottom: a rule, the header, a row per replica; the lines above it.
    assert re.fullmatch(r"replica\s+step\s+steps/s\s+commit\s+idle\s+state", lines[-4]), screen
    assert set(lines[-5]) == {"-"}
    assert [line.split()[0] for line in lines[-3:]] == list(REPLICAS)
    assert all(float(row["rate"]) > 0 and int(row["step"]) > 0 for row in rows.values())

    while "vtrain-exit=" not in screen and time.monotonic() < deadline + 20:
        time.sleep(0.3)
        screen = tmux("capture-pane", "-p", "-t", "job")
    assert "vtrain-exit=0" in screen, screen
    everything = tmux("capture-pane", "-p", "-t", "job", "-S", "-")  # and the scrollback
    # The end erased the view: the summary follows the replicas' last lines.
    assert re.search(r"replica\s+step\s+steps/s", everything) is None, everything
    assert "job succeeded (exit status 0)" in everything
    assert "chief-0  | finished" in everything
    for line in NOISE_LINES:
        assert line[:40] not in everything
    for line in SHOWN_LINES:
        assert line[:40] in everything
    for name in REPLICAS:
        log = (out / "replica-logs" / f"{name}.log").read_text()
        assert all(line in log for line in (*NOISE_LINES, *SHOWN_LINES))


@pytest.mark.parametrize("verbose", [False, True])
def test_without_a_terminal_progress_lines_come_and_noise_stays_in_the_logs(
    vtrain: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path, verbose: bool
) -> None:
    done = vtrain(
        "--output-dir",
        "out",
        "--workers",
        "1",
        "--progress-every",
        "0.5",
        *(["--verbose"] if verbose else []),
        "--",
        sys.executable,
        STEPPER,
        "--steps",
        "30",
        "--noise",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    console = done.stdout
    assert "\033[" not in console  # no cursor moves into a pipe
    assert re.search(r"vtrain\s+\| chief-0: training, step \d+, [\d.]+ steps/s", console)
    assert re.search(r"vtrain\s+\| worker-0: training, step \d+", console)
    for line in NOISE_LINES:
        assert (line in console) is verbose
    for line in SHOWN_LINES:
        assert line in console
    for name in ("chief-0", "worker-0"):
        log = (tmp_path / "out" / "replica-logs" / f"{name}.log").read_text()
        assert all(line in log for line in (*NOISE_LINES, *SHOWN_LINES))
