"""`vtrain tune` and signals: 143 for SIGTERM, a second Ctrl-C kills, nothing is left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tune_helpers import study

from vtrain.local.reaper import reaping
from vtrain.tune.results import Trial
from vtrain.tune.runner import StudyRunner
from vtrain.tune.study_file import study_from_document

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

# A trial that ignores SIGTERM (a slow save), leaves a daemon, and never ends by itself.
STUBBORN = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
out = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open(os.path.join(out, f"daemon-{os.getpid()}"), "w").close()
        time.sleep(600)
    os._exit(0)
open(os.path.join(out, f"trial-{os.getpid()}"), "w").close()
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def pids(folder: Path, kind: str) -> list[int]:
    return [int(p.name.split("-")[1]) for p in folder.glob(f"{kind}-*")]


def start(tmp_path: Path, trials: int) -> tuple[subprocess.Popen[str], Path]:
    """`vtrain tune` of `trials` stubborn trials at once; returns once all have started."""
    records, script, study_file = tmp_path / "records", tmp_path / "t.py", tmp_path / "s.json"
    records.mkdir()
    script.write_text(STUBBORN)
    study_file.write_text(json.dumps(study(max_trial_count=trials, parallel_trial_count=trials)))
    tuner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vtrain",
            "tune",
            "--study",
            str(study_file),
            "--output-dir",
            str(tmp_path / "out"),
            "--",
            sys.executable,
            str(script),
            str(records),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while len(pids(records, "trial")) + len(pids(records, "daemon")) < 2 * trials:
        assert time.monotonic() < deadline and tuner.poll() is None
        time.sleep(0.05)
    return tuner, records


def survivors(records: Path, seconds: float = 5) -> list[int]:
    """The trials and daemons still alive after `seconds`; they are killed, then returned."""
    left = pids(records, "trial") + pids(records, "daemon")
    deadline = time.monotonic() + seconds
    while any(map(alive, left)) and time.monotonic() < deadline:
        time.sleep(0.05)
    found = [p for p in left if alive(p)]
    for pid in found:
        os.kill(pid, signal.SIGKILL)
    return found


def states(tmp_path: Path) -> list[str]:
    document = json.loads((tmp_path / "out" / "study.json").read_text())
    return [t["status"] for t in document["trials"]]


def test_sigterm_exits_143_and_stops_every_trial_and_daemon(tmp_path: Path) -> None:
    tuner, records = start(tmp_path, 1)
    try:
        tuner.send_signal(signal.SIGTERM)
        assert tuner.wait(60) == 143  # before: 130, as for Ctrl-C
    finally:
        tuner.kill()
    assert survivors(records) == []
    assert states(tmp_path) == ["STOPPED"]


def test_an_interruption_while_a_trial_s_start_is_recorded_stops_it_and_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The trial runs before study.json says it started (a file written, slow on a busy
    # disk): a Ctrl-C or SIGTERM that lands there stops it with the others, recorded so.
    # Before: it ran on unrecorded until the exit's sweep, and study.json said ACTIVE.
    document = study(max_trial_count=1, parallel_trial_count=1)
    command = [sys.executable, "-c", "import time; time.sleep(600)"]
    runner = StudyRunner(study_from_document(document), command, str(tmp_path / "out"))
    record = StudyRunner._record

    def interrupted(self: StudyRunner, trial: Trial, event: str) -> None:
        record(self, trial, event)
        if event == "started":
            raise KeyboardInterrupt

    monkeypatch.setattr(StudyRunner, "_record", interrupted)
    with reaping(), pytest.raises(KeyboardInterrupt):
        runner.run()
    assert states(tmp_path) == ["STOPPED"]
    assert [t.status for t in runner.trials.values()] == ["STOPPED"]


def test_a_second_ctrl_c_kills_the_trials_and_records_them_stopped(tmp_path: Path) -> None:
    tuner, records = start(tmp_path, 2)
    try:
        tuner.send_signal(signal.SIGINT)
        time.sleep(0.5)  # the trials ignore the SIGTERM the first one sends them
        tuner.send_signal(signal.SIGINT)
        began = time.monotonic()
        assert tuner.wait(60) == 130
        assert time.monotonic() - began < 5  # not the 10 s grace: killed at once
    finally:
        tuner.kill()
    # Before: the second Ctrl-C escaped the stop, the trials ran on, study.json said ACTIVE.
    assert survivors(records) == []
    assert states(tmp_path) == ["STOPPED", "STOPPED"]
    assert "Traceback" not in (tuner.stderr.read() if tuner.stderr else "")


def test_kill_9_of_vtrain_tune_takes_its_trials_with_it(tmp_path: Path) -> None:
    tuner, records = start(tmp_path, 1)
    tuner.kill()
    tuner.wait()
    assert survivors(records) == []  # before: the trial, orphaned, slept on
