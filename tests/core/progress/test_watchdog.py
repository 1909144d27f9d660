"""The watchdog in a real process: a trainer that stops making progress is ended, and says why.

Each case runs a small trainer in a child process (the watchdog ends its process)
with a bound of a second or two, marking steps through the handle's words.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vtrain.progress.bound import STUCK_EXIT, STUCK_PREFIX
from vtrain.progress.file import read

TRAINER = """
import os, sys, threading, time
from vtrain.cluster import ClusterInfo
from vtrain.plugins.handle import Handle
from vtrain.progress.watchdog import watch

handle = Handle(ClusterInfo.from_env({}), is_leader=True)
watch(os.environ, launched=True)
for step in range(1, 31):
    time.sleep(0.02)
    handle.step()
{then}
print("finished", flush=True)
"""

BOUND = {
    "VTRAIN_STUCK_FLOOR": "1.5",
    "VTRAIN_FIRST_STEP_SECONDS": "3",
    "VTRAIN_WATCHDOG": "on",
}


def run(tmp_path: Path, then: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The trainer above, 30 steps, then `then`."""
    return run_script(tmp_path, TRAINER.replace("{then}", textwrap.dedent(then)), **env)


def run_script(tmp_path: Path, text: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Python `text` in a child process, with the test's bound and `env`."""
    script = tmp_path / "trainer.py"
    script.write_text(text)
    return subprocess.run(
        [sys.executable, str(script)],
        env={"PATH": "/usr/bin:/bin", **BOUND, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_trainer_that_stops_stepping_is_ended_with_its_stacks(tmp_path: Path) -> None:
    started = time.monotonic()
    done = run(tmp_path, "def fetch_the_next_batch():\n    time.sleep(600)\nfetch_the_next_batch()")
    assert done.returncode == STUCK_EXIT, done.stderr
    assert "finished" not in done.stdout
    [line] = [x for x in done.stderr.splitlines() if x.startswith(STUCK_PREFIX)]
    assert "after step 30" in line and "the floor of 1.5 s" in line, line
    assert f"exit {STUCK_EXIT}" in line
    # Every thread's stack, the stuck place in it.
    assert "most recent call first" in done.stderr
    assert "fetch_the_next_batch" in done.stderr
    assert time.monotonic() - started < 30


def test_what_it_waited_for_is_named(tmp_path: Path) -> None:
    done = run(tmp_path, "with handle.long('the nightly evaluation', 1):\n    time.sleep(600)")
    assert done.returncode == STUCK_EXIT, done.stderr
    assert "waiting for the nightly evaluation" in done.stderr
    assert "handle.long(...) gave 1 s" not in done.stderr  # the floor reached further


def test_a_long_block_within_its_seconds_is_no_hang(tmp_path: Path) -> None:
    done = run(tmp_path, "with handle.long('an evaluation', 6):\n    time.sleep(3)")
    assert done.returncode == 0, done.stderr
    assert "finished" in done.stdout


def test_steady_steps_are_never_stuck(tmp_path: Path) -> None:
    done = run(tmp_path, "for _ in range(150):\n    time.sleep(0.02)\n    handle.step()")
    assert done.returncode == 0, done.stderr
    assert STUCK_PREFIX not in done.stderr


def test_off_means_off(tmp_path: Path) -> None:
    done = run(tmp_path, "time.sleep(2.5)", VTRAIN_WATCHDOG="off")
    assert done.returncode == 0, done.stderr


def test_the_first_step_has_its_allowance(tmp_path: Path) -> None:
    started = time.monotonic()
    done = run_script(
        tmp_path,
        "import os, time\n"
        "from vtrain.progress.watchdog import watch\n"
        "watch(os.environ, launched=True)\n"
        "time.sleep(2)\n"  # under the 3 s allowance, past the 1.5 s floor
        "print('started', flush=True)\n"
        "import threading\n"
        "threading.Event().wait(600)\n",  # a wait it knows (a rendezvous, a lock)
    )
    assert done.returncode == STUCK_EXIT and "started" in done.stdout, done.stderr
    assert "first-step allowance 3 s" in done.stderr
    assert 3 <= time.monotonic() - started < 30


def test_the_progress_file_holds_the_steps(tmp_path: Path) -> None:
    path = tmp_path / "chief-0.progress"
    done = run(
        tmp_path,
        "handle.save_checkpoint\n"  # a word of the handle, not called: this handle saves nothing
        "time.sleep(2.5)",
        VTRAIN_PROGRESS_FILE=str(path),
        VTRAIN_STUCK_FLOOR="30",
    )
    assert done.returncode == 0, done.stderr
    found = read(str(path))
    assert found is not None
    assert found.step == 30 and found.marks == 30
    assert found.rate is not None and 10 < found.rate < 60  # 30 steps of 20 ms and a bit
    assert found.state == "done"  # the script ended: its watchdog stopped at the exit
    assert path.stat().st_mode & 0o077 == 0  # private, as every file vtrain writes for itself


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), "soon"])
def test_long_refuses_a_bad_number_of_seconds(seconds: object) -> None:
    from vtrain.cluster import ClusterInfo
    from vtrain.errors import UsageError
    from vtrain.plugins.handle import Handle

    handle = Handle(ClusterInfo.from_env({}), is_leader=True)
    with pytest.raises(UsageError, match="long"), handle.long("x", seconds):  # type: ignore[arg-type]
        pass


def test_a_trainer_that_marks_nothing_but_moves_is_not_judged(tmp_path: Path) -> None:
    # 100 lines of 5 ms: each look finds the main thread on another line, as a loop that
    # runs finds it; 9 rounds run past the 3 s allowance, marking no step.
    body = "".join("    time.sleep(0.005)\n" for _ in range(100))
    done = run_script(
        tmp_path,
        "import os, time\n"
        "from vtrain.progress.watchdog import watch\n"
        "watch(os.environ, launched=True)\n"
        f"def my_own_training():\n{body}"
        "for _ in range(9):\n"
        "    my_own_training()\n"
        "print('trained', flush=True)\n",
    )
    assert done.returncode == 0 and "trained" in done.stdout, done.stderr
    assert done.stderr.count("the watchdog cannot tell a hang from work") == 1, done.stderr


def test_a_trainer_that_marks_nothing_and_stands_still_is_stuck(tmp_path: Path) -> None:
    done = run_script(
        tmp_path,
        "import os, time\n"
        "from vtrain.progress.watchdog import watch\n"
        "watch(os.environ, launched=True)\n"
        "def connect_to_the_chief():\n"
        "    time.sleep(600)\n"  # one call that never returns: a rendezvous that hangs
        "connect_to_the_chief()\n",
    )
    assert done.returncode == STUCK_EXIT, done.stderr
    assert "first-step allowance 3 s" in done.stderr and "connect_to_the_chief" in done.stderr


def test_a_trainer_stuck_in_c_code_that_holds_the_gil_is_ended_by_the_backstop(
    tmp_path: Path,
) -> None:
    from vtrain.progress.backstop import SIGNAL

    # ctypes.PyDLL keeps the GIL through the call: the watchdog's thread cannot run.
    hang = "import ctypes\ndef connect_to_peer():\n    ctypes.PyDLL(None).sleep(600)\n"
    done = run(tmp_path, hang + "connect_to_peer()")
    assert done.returncode == -SIGNAL, (done.returncode, done.stderr)
    assert "most recent call first" in done.stderr and "connect_to_peer" in done.stderr


def test_the_backstop_ends_a_trainer_that_ignores_its_signal_as_a_container_s_pid_1_does(
    tmp_path: Path,
) -> None:
    from vtrain.progress.backstop import SIGNAL
    from vtrain.progress.bound import BACKSTOP_EXIT

    # PID 1 in its namespace is spared a signal it has no handler for: faulthandler writes
    # the stacks and re-raises it to no effect. Ignoring the signal does the same anywhere.
    ignored = f"import signal\nsignal.signal({int(SIGNAL)}, signal.SIG_IGN)\n"
    # A mutex it holds, locked again: a wait no signal interrupts (a sleep returns early).
    hang = (
        "import ctypes\n"
        "def connect_to_peer():\n"
        "    libc, mutex = ctypes.PyDLL(None), ctypes.create_string_buffer(64)\n"
        "    libc.pthread_mutex_lock(mutex)\n"
        "    libc.pthread_mutex_lock(mutex)\n"
    )
    done = run_script(tmp_path, ignored + TRAINER.replace("{then}", hang + "connect_to_peer()"))
    assert done.returncode == BACKSTOP_EXIT, (done.returncode, done.stderr)
    assert "most recent call first" in done.stderr and "connect_to_peer" in done.stderr
    assert "finished" not in done.stdout


def test_a_preempted_trainer_that_hangs_as_it_leaves_exits_143_not_as_stuck(
    tmp_path: Path,
) -> None:
    # Its save is committed and it is leaving: the grace's deadline bounds that, with the
    # status that says "preempted", not the watchdog's 75 (TensorFlow was seen to hang so,
    # deleting a variable on a parameter server as `fit` unwound).
    leaving = (
        "import signal\n"
        "from vtrain.preemption import PreemptionHandler\n"
        "handler = PreemptionHandler(grace=6).install()\n"
        "signal.raise_signal(signal.SIGTERM)\n"
        "try:\n"
        "    handler.exit()\n"
        "finally:\n"
        "    time.sleep(600)\n"
    )
    done = run(tmp_path, leaving)
    assert done.returncode == 143, (done.returncode, done.stderr)
    assert STUCK_PREFIX not in done.stderr and "finished" not in done.stdout


def test_a_forked_child_of_a_watched_trainer_exits_as_it_should(tmp_path: Path) -> None:
    done = run(
        tmp_path,
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    sys.exit(3)\n"  # a normal exit: the interpreter's finalization runs
        "print('child', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)",
    )
    assert done.returncode == 0 and "child 3" in done.stdout, done.stderr


def test_a_trainer_polling_for_a_peer_that_never_comes_is_stuck(tmp_path: Path) -> None:
    # vtrain's own wait for the chief polls (its stack moves), yet stands: a frozen peer.
    done = run_script(
        tmp_path,
        "import os, socket\n"
        "from datetime import timedelta\n"
        "from vtrain.plugins.wait import tcp_probe, wait_for\n"
        "from vtrain.progress.watchdog import watch\n"
        "watch(os.environ, launched=True)\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close()\n"
        "wait_for(tcp_probe('127.0.0.1', port), what='the chief', address=f'127.0.0.1:{port}', "
        "source='a test', deadline=timedelta(seconds=120))\n",
    )
    assert done.returncode == STUCK_EXIT, done.stderr
    assert "waiting for a peer to start" in done.stderr
