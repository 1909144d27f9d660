"""Background saves (`blocking=False`): the snapshot, the failures, and waiting at every exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from vtrain.checkpoints import CheckpointManager, Snapshot
from vtrain.errors import CheckpointError


def manager(medium, **kwargs) -> CheckpointManager:
    kwargs.setdefault("is_leader", True)
    return CheckpointManager(medium.uri, **medium.options, **kwargs)


def test_the_committed_bytes_are_those_of_the_call(medium) -> None:
    m = manager(medium)
    weights = bytearray(b"A" * 300_000)
    files = {"w": weights, "o": memoryview(bytearray(b"B" * 1000))}

    def write(folder: str) -> None:
        Path(folder, "w.bin").write_bytes(weights)

    m.save(1, files, blocking=False)
    weights[:] = b"Z" * len(weights)  # the loop goes on training at once
    files["o"][:] = b"Y" * 1000
    m.save(2, weights, blocking=False)
    weights[:10] = b"0123456789"
    m.save(3, write, blocking=False)  # a plain callable runs before save returns
    weights[:] = b"X" * len(weights)
    m.wait()
    assert m.steps() == [1, 2, 3]
    with m.restore(1) as one:  # type: ignore[union-attr]
        assert one.files["w"] == b"A" * 300_000 and one.files["o"] == b"B" * 1000
    assert m.restore(2).data == b"Z" * 300_000  # type: ignore[union-attr]
    with m.restore(3) as three:  # type: ignore[union-attr]
        assert Path(three.directory, "w.bin").read_bytes() == b"0123456789" + b"Z" * 299_990


def test_a_snapshot_writer_runs_later_on_the_thread(tmp_path: Path) -> None:
    m = CheckpointManager(tmp_path / "c", is_leader=True)
    release = threading.Event()
    ran_on: list[str] = []

    def write(folder: str) -> None:
        release.wait(10)
        ran_on.append(threading.current_thread().name)
        Path(folder, "state").write_bytes(b"copied state")

    m.save(7, Snapshot(write), blocking=False)
    other = CheckpointManager(tmp_path / "c", is_leader=False)  # its reads wait for nothing
    assert m.pending_step == 7 and not m.wait(timeout=0.05) and other.steps() == []
    release.set()
    assert m.steps() == [7] and m.pending_step is None  # a manager's reads wait for its save
    assert ran_on == ["vtrain-save-7"]


def test_a_background_failure_surfaces_on_wait_and_commits_nothing(medium) -> None:
    m = manager(medium)
    m.save(1, b"fine")

    def broken(folder: str) -> None:
        Path(folder, "half").write_bytes(b"half")
        raise OSError(28, "No space left on device")

    m.save(2, Snapshot(broken), blocking=False)
    with pytest.raises(CheckpointError, match=r"background save of step 2 failed.*No space"):
        m.wait()
    assert m.steps() == [1] and m.latest_step() == 1
    m.wait()  # reported once: the manager goes on
    m.save(3, b"three")
    assert m.steps() == [1, 3]


def test_a_background_failure_surfaces_on_the_next_save(tmp_path: Path) -> None:
    m = CheckpointManager(tmp_path / "c", is_leader=True)

    def broken(folder: str) -> None:
        raise RuntimeError("the copy of the tensors was corrupt")

    m.save(1, Snapshot(broken), blocking=False)
    with pytest.raises(CheckpointError, match=r"step 1 failed: the copy of the tensors") as e:
        m.save(2, b"two")
    assert "not committed" in str(e.value) and isinstance(e.value.__cause__, RuntimeError)
    assert m.steps() == []  # the failed step is not there, and step 2 was not started
    m.save(2, b"two")
    assert m.steps() == [2]


def test_close_and_the_context_manager_wait(tmp_path: Path) -> None:
    with CheckpointManager(tmp_path / "c", is_leader=True) as m:
        m.save(
            1, Snapshot(lambda d: (time.sleep(0.3), Path(d, "x").write_bytes(b"x"))), blocking=False
        )
    assert m.pending_step is None and m.steps() == [1]


SLOW_SAVER = """
import sys, time
from pathlib import Path
from vtrain.checkpoints import CheckpointManager, Snapshot

def write(folder):
    time.sleep(1.0)  # still writing when the script ends
    Path(folder, "model").write_bytes(b"m" * 1000)

m = CheckpointManager(sys.argv[1], is_leader=True)
m.save(5, Snapshot(write), blocking=False)
"""


def test_the_interpreter_waits_for_a_pending_save_at_exit(tmp_path: Path) -> None:
    script = tmp_path / "saver.py"
    script.write_text(SLOW_SAVER + "print('leaving', flush=True)\n")
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "c")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "leaving\n"
    assert CheckpointManager(tmp_path / "c", is_leader=True).steps() == [5]


def test_a_preemption_exit_flushes_the_pending_save_within_its_grace(tmp_path: Path) -> None:
    script = tmp_path / "preempted.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, time
            from pathlib import Path
            from vtrain import PreemptionHandler
            from vtrain.checkpoints import CheckpointManager, Snapshot

            def write(folder):
                time.sleep(1.0)
                Path(folder, "model").write_bytes(b"m")

            m = CheckpointManager(sys.argv[1], is_leader=True)
            with PreemptionHandler(grace=20) as preempted:
                print("ready", flush=True)
                while not preempted:
                    time.sleep(0.01)
                m.save(9, Snapshot(write), blocking=False)
                preempted.exit()
            """
        )
    )
    child = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "c")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 143, err
    assert CheckpointManager(tmp_path / "c", is_leader=True).steps() == [9]


def test_reused_staging_buffers_never_change_a_committed_step(medium) -> None:
    m = manager(medium)
    weights = bytearray(200_000)
    for step in range(1, 6):
        weights[:] = bytes([step]) * len(weights)
        m.save(step, {"w": weights}, blocking=False)  # the same size: the same staging buffer
    m.close()
    for step in range(1, 6):
        with m.restore(step) as ckpt:  # type: ignore[union-attr]
            assert ckpt.files["w"] == bytes([step]) * len(weights), step
