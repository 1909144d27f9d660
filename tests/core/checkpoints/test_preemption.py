"""SIGTERM to a real training process: it saves once more, then exits 143 within its grace."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vtrain.checkpoints import CheckpointManager
from vtrain.errors import UsageError
from vtrain.preemption import EXIT_STATUS, PreemptionHandler

LOOP = """
    import sys, time
    from vtrain.checkpoints import CheckpointManager
    from vtrain.preemption import PreemptionHandler
    m = CheckpointManager(sys.argv[1], is_leader=True, environ={{}})
    with PreemptionHandler(grace={grace}) as preempted:
        print("ready", flush=True)
        step = 0
        while True:
            time.sleep(0.01)  # one training step
            if preempted:
                m.save(step, b"final %d" % step)
                print("final", step, flush=True)
                {after_save}
            step += 1
"""


def start(tmp_path: Path, *, grace: float, after_save: str) -> subprocess.Popen[str]:
    code = textwrap.dedent(LOOP.format(grace=grace, after_save=after_save))
    process = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / "ckpt")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


def test_sigterm_saves_once_more_then_exits_143(tmp_path: Path) -> None:
    process = start(tmp_path, grace=30, after_save="preempted.exit()")
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    assert process.returncode == EXIT_STATUS == 143, err
    final = int(out.split()[-1])
    m = CheckpointManager(tmp_path / "ckpt", is_leader=True, environ={})
    ckpt = m.restore()
    assert ckpt is not None and ckpt.step == final and ckpt.data == b"final %d" % final


def test_breaking_out_of_the_loop_still_exits_143(tmp_path: Path) -> None:
    # Falling out of the `with` after a signal must not turn into a successful exit 0.
    process = start(tmp_path, grace=30, after_save="break")
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err


def test_the_grace_budget_ends_a_loop_that_does_not_stop(tmp_path: Path) -> None:
    process = start(tmp_path, grace=0.5, after_save="time.sleep(600)")
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 143 and "final" in out


def test_the_grace_budget_ends_a_loop_stuck_in_c_code_that_holds_the_gil(tmp_path: Path) -> None:
    # ctypes.PyDLL keeps the GIL through the call, as TensorFlow did deleting a traced function
    # as `fit` unwound after the save: no Python thread could keep the deadline.
    stuck = "import ctypes; ctypes.PyDLL(None).sleep(600); print('back', flush=True)"
    process = start(tmp_path, grace=0.5, after_save=stuck)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)  # past 60 s: the deadline did not hold
    assert process.returncode == 143 and "final" in out and "back" not in out, err


def test_a_deadline_that_was_cancelled_never_fires() -> None:
    code = textwrap.dedent(
        """
        import signal, time
        from vtrain.preemption import PreemptionHandler
        handler = PreemptionHandler(grace=0.2).install()
        signal.raise_signal(signal.SIGTERM)
        assert handler.requested
        handler.uninstall()
        time.sleep(1)  # five times the grace
        print("still here", flush=True)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "still here\n"), done.stderr


def test_a_second_signal_exits_at_once(tmp_path: Path) -> None:
    process = start(tmp_path, grace=600, after_save="time.sleep(600)")
    process.send_signal(signal.SIGTERM)
    assert process.stdout is not None and process.stdout.readline().startswith("final")
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    assert process.returncode == 143


def test_without_a_signal_nothing_changes() -> None:
    previous = signal.getsignal(signal.SIGTERM)
    with PreemptionHandler(grace=5) as preempted:
        assert not preempted and preempted.time_left() is None
        assert signal.getsignal(signal.SIGTERM) != previous
        preempted.exit_if_requested()
    assert signal.getsignal(signal.SIGTERM) == previous


def test_a_signal_sets_the_flag_and_starts_the_clock() -> None:
    handler = PreemptionHandler(grace=60, signals=(signal.SIGUSR1,)).install()
    try:
        signal.raise_signal(signal.SIGUSR1)
        assert handler.requested
        left = handler.time_left()
        assert left is not None and 0 < left <= 60
        with pytest.raises(SystemExit) as exited:
            handler.exit_if_requested()
        assert exited.value.code == 143
    finally:
        handler.uninstall()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"grace": 0}, "grace: not a grace period"), ({"exit_status": "1"}, "not an exit status")],
)
def test_bad_arguments(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        PreemptionHandler(**kwargs)  # type: ignore[arg-type]
