"""A stuck trainer's stack dump, told from its other lines; never quoted as its last words."""

from __future__ import annotations

import faulthandler
import subprocess
import sys

import pytest

from vtrain.local.checks.job import last_words
from vtrain.progress.dump import is_stack_line


def test_every_line_of_a_real_dump_is_a_stack_line() -> None:
    code = "import faulthandler, sys, threading, time\n"
    code += "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
    code += "faulthandler.dump_traceback(sys.stdout, all_threads=True)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) >= 4 and all(is_stack_line(line) for line in lines), lines
    assert faulthandler.is_enabled() in (True, False)  # the module is the one that wrote it


@pytest.mark.parametrize(
    "line",
    [
        'File "/work/train.py", line 3, in <module>',  # a traceback's frame: a comma
        '  File "/work/train.py", line 3, in <module>',
        "Traceback (most recent call last):",
        "vtrain: stuck: no progress for 21 s after step 40",
        "RuntimeError: Connection closed by peer",
        "Thread started",
        "",
    ],
)
def test_other_lines_are_not(line: str) -> None:
    assert not is_stack_line(line)


def test_the_last_words_of_a_stuck_trainer_are_its_watchdog_s() -> None:
    tail = [
        "vtrain: stuck: no progress for 21 s after step 40, waiting for the kvstore",
        "Current thread 0x00007f0c1a2b3740 (most recent call first):",
        '  File "/venv/mxnet/kvstore.py", line 12 in pull',
        '  File "/work/train.py", line 112 in <module>',
        "",
    ]
    assert last_words(tail) == tail[0]
