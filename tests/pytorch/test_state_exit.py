"""TrainingState saves in the background: a save failing after the script's end fails the script."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
from pathlib import Path

from vtrain.checkpoints import CheckpointManager

SCRIPT = """
    import sys, torch
    from vtrain.checkpoints import CheckpointManager
    from vtrain_pytorch.state import TrainingState

    manager = CheckpointManager(sys.argv[1], is_leader=True, environ={})
    state = TrainingState(torch.nn.Linear(8, 1), manager=manager)
    state.save(1)
    state.wait()
    state.model = torch.nn.Linear(1024, 1024)  # 4 MiB of weights: over the file-size limit
    state.save(2)  # in the background, and never waited for, as examples/pytorch/train.py ends
    print("end of script", flush=True)
"""


def _limit_file_size() -> None:
    # A write past the limit fails with EFBIG (Python ignores SIGXFSZ): a disk that is full.
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))


def test_a_background_save_that_fails_at_exit_fails_the_script(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path / "c")],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_file_size,
    )
    assert done.stdout == "end of script\n"
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    # torch.save's own words for the failed write ("unexpected pos …") follow the colon.
    assert line.startswith("-c: error: ") and "the background save of step 2 failed: " in line
    assert CheckpointManager(tmp_path / "c", is_leader=False, environ={}).steps() == [1]
