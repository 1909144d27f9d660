"""Hints for an OSError follow its errno: a descriptor limit is never blamed on a folder.

The sweep runs `vtrain local run` with only a few descriptors left, so that the
limit strikes at a different open each time: a port lock, a socket, a pipe,
a log file, the replica's own start.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.os_hints import OUT_OF_DESCRIPTORS, hint_for

SPACE = {errno.ENOSPC, errno.EDQUOT}


@examples(200)
@given(code=st.sampled_from(sorted(errno.errorcode)), default=st.none() | st.just("DEFAULT"))
def test_a_hint_speaks_of_the_errno_it_was_given(code: int, default: str | None) -> None:
    hint = hint_for(OSError(code, os.strerror(code)), default)
    assert hint is not None or default is None
    text = (hint or "").lower()
    if code in OUT_OF_DESCRIPTORS:
        assert "file descriptors" in text and "output" not in text
    if "free some space" in text:
        assert code in SPACE
    if code in (errno.ENOTEMPTY, errno.EEXIST):
        assert "same time" in text and "space" not in text


SCRIPT = """
import os, resource, sys
from vtrain.cli import main

free, workers, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
held = []
try:
    while True:
        held.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
for fd in held[len(held) - free:]:
    os.close(fd)
sys.exit(main(["local", "run", "--workers", workers, "--output-dir", out, "--", "true"]))
"""


@pytest.mark.parametrize("workers", ["1", "5"])
def test_running_out_of_descriptors_is_one_line_that_says_so(tmp_path: Path, workers: str) -> None:
    script = tmp_path / "few_descriptors.py"
    script.write_text(textwrap.dedent(SCRIPT))
    for free in range(2, 24, 2):
        done = subprocess.run(
            [sys.executable, str(script), str(free), workers, str(tmp_path / "out")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode == 0:
            continue  # enough were left
        errors = [line for line in done.stderr.splitlines() if "error:" in line]
        assert done.returncode == 2 and len(errors) == 1, done.stderr
        assert "Traceback" not in done.stderr
        assert "Too many open files" in errors[0]
        # Not "expected a program every replica can run": the program was fine.
        assert "every replica can run" not in errors[0]
        assert "file descriptors" in errors[0] and "--output-dir" not in errors[0]
