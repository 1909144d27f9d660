"""A background save still running when the script ends: waited for, and a failure fails the exit.

Each case runs a real child interpreter. The disk is really full where the test
can make one (a 1 MiB tmpfs, as root), and a file-size limit (RLIMIT_FSIZE,
which makes a write fail with EFBIG) stands in for it everywhere else.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vtrain.checkpoints import CheckpointManager

SAVER = """
    import atexit, sys, time
    from pathlib import Path
    from vtrain.checkpoints import CheckpointManager, Snapshot

    atexit.register(lambda: print("the script's own exit handler ran", file=sys.stderr))
    m = CheckpointManager(sys.argv[1], is_leader=True, environ={{}})
    m.save(1, b"one")

    def raising(folder):
        Path(folder, "half").write_bytes(b"half")
        raise OSError(28, "No space left on device")

    def large(folder):
        time.sleep(0.2)  # still writing when the script ends
        Path(folder, "model.bin").write_bytes(b"m" * (4 << 20))

    {body}
    print("end of script", flush=True)
"""


def run(
    tmp_path: Path, folder: Path, body: str, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "saver.py"
    script.write_text(textwrap.dedent(SAVER.format(body=body)))
    return subprocess.run(
        [sys.executable, str(script), str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,  # type: ignore[call-overload]
    )


def steps(folder: Path) -> list[int]:
    return CheckpointManager(folder, is_leader=False, environ={}).steps()


@contextlib.contextmanager
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MiB file system; skipped where this user may not mount one."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _limit_file_size() -> None:
    # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG instead of a kill.
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))


LINE = r"saver\.py: error: .*step-000000000002: the background save of step 2 failed: "


@pytest.mark.parametrize(
    ("how", "cause"),
    [
        ("raises", "No space left on device"),
        ("full-disk", "No space left on device"),
        ("file-size-limit", "File too large"),
    ],
)
def test_a_save_that_fails_at_exit_fails_the_process(tmp_path: Path, how: str, cause: str) -> None:
    folder = tmp_path / "c"
    options: dict[str, Callable[[], None]] = {}
    writer = "raising" if how == "raises" else "large"
    with contextlib.ExitStack() as stack:
        if how == "full-disk":
            folder = stack.enter_context(full_disk(tmp_path)) / "c"
        if how == "file-size-limit":
            options["preexec_fn"] = _limit_file_size
        done = run(tmp_path, folder, f"m.save(2, Snapshot({writer}), blocking=False)", **options)
        assert done.stdout == "end of script\n"
        assert done.returncode == 1, done.stderr
        first, *rest = done.stderr.splitlines()
        # One line that says which step failed and why; then the exit handlers, each once.
        assert re.match(LINE + ".*" + cause, first), first
        assert rest == ["the script's own exit handler ran"], done.stderr
        assert steps(folder) == [1]


def test_a_failure_already_raised_by_wait_does_not_fail_the_exit(tmp_path: Path) -> None:
    body = """
    m.save(2, Snapshot(raising), blocking=False)
    try:
        m.wait()
    except Exception as e:
        print("handled:", type(e).__name__, file=sys.stderr)
    """
    done = run(tmp_path, tmp_path / "c", body)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "handled: CheckpointError",
        "the script's own exit handler ran",
    ]


def test_a_save_that_succeeds_at_exit_is_committed_on_every_medium(medium, tmp_path: Path) -> None:
    # On gs:// the exit check must run before concurrent.futures forbids new thread pools:
    # a save still starting its uploads needs one (several files go up side by side).
    script = tmp_path / "gs_saver.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys, time
            from pathlib import Path
            from vtrain.checkpoints import CheckpointManager, Snapshot

            def write(folder):
                time.sleep(0.5)  # the script has ended by now
                for i in range(4):
                    Path(folder, f"part-{i}").write_bytes(b"p" * 1000)

            options = json.loads(sys.argv[2])
            m = CheckpointManager(sys.argv[1], is_leader=True, **options)
            m.save(3, Snapshot(write), blocking=False)
            """
        )
    )
    options = {k: v for k, v in medium.options.items() if k in ("environ", "gcs_mount")}
    done = subprocess.run(
        [sys.executable, str(script), medium.uri, json.dumps(options)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    m = CheckpointManager(medium.uri, is_leader=False, **medium.options)
    assert m.steps() == [3]
    with m.restore(3) as ckpt:  # type: ignore[union-attr]
        assert sorted(os.listdir(ckpt.directory)) == [f"part-{i}" for i in range(4)]


def test_a_preemption_keeps_its_status_and_prints_the_failed_save(tmp_path: Path) -> None:
    script = tmp_path / "preempted.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, time
            from vtrain import PreemptionHandler
            from vtrain.checkpoints import CheckpointManager, Snapshot

            def broken(folder):
                time.sleep(0.3)
                raise OSError(28, "No space left on device")

            m = CheckpointManager(sys.argv[1], is_leader=True, environ={})
            with PreemptionHandler(grace=20) as preempted:
                print("ready", flush=True)
                while not preempted:
                    time.sleep(0.01)
                m.save(9, Snapshot(broken), blocking=False)
                preempted.exit()
            """
        )
    )
    child = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "c")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    # 143, not 1: the platform restarts a preempted replica, and the step before is intact.
    assert child.returncode == 143, err
    assert "the background save of step 9 failed: " in err and "No space left" in err
    assert len(err.splitlines()) == 1, err
    assert steps(tmp_path / "c") == []
