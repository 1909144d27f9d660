"""A replica whose script refuses its arguments (a usage error, exit status 2) is not restarted,
however long it took to reach its parser; every other failure restarts as the platform's would."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from local_procs import MARK

from vtrain.local import Plan, run_job
from vtrain.local.usage_error import refused_arguments

Run = Callable[..., subprocess.CompletedProcess[str]]

# As examples/pytorch/train.py is: the parser comes after an import that takes a while.
SLOW_SCRIPT = """\
import argparse, time
time.sleep(1.5)  # `import torch`
parser = argparse.ArgumentParser(prog="task.py")
parser.add_argument("--epochs", type=int, default=1)
parser.parse_args()
print("trained")
"""


def test_a_usage_error_after_a_slow_import_ends_the_job_without_a_restart(
    vtrain: Run, tmp_path: Path
) -> None:
    (tmp_path / "task.py").write_text(SLOW_SCRIPT)
    # What the README's rehearsal passed before the fix: the module twice.
    done = vtrain("--", sys.executable, "task.py", "-m", "trainer.task", "--epochs", "3")
    out = done.stdout
    assert done.returncode == 2, out + done.stderr
    assert out.count("usage: task.py") == 1, "one run: the chief was not restarted"
    assert re.search(r"^chief-0 +0 +2 ", out, re.MULTILINE), out
    error = "task.py: error: unrecognized arguments: -m trainer.task"
    assert (
        "chief-0's script refused its arguments; not restarting it, as a restart passes "
        f"the same arguments: {error}" in out
    )
    assert f"job failed (exit status 2): chief-0's script refused its arguments: {error}\n" in out
    # The verdict ends the rehearsal, and names the same refusal.
    assert out.endswith(
        f"verdict: not ready: 1 finding\n  [args] chief-0: refused its arguments ({error}); "
        "accept the flags the platform passes (--job-dir, the study's parameters): "
        "declare them, or use parse_known_args()\n"
    )
    assert "restart 1 of" not in out


def _run(tmp_path: Path, mark: str, code: str, monkeypatch: pytest.MonkeyPatch) -> str:
    # Every run is slow here: only the usage rule may stop a restart.
    monkeypatch.setattr("vtrain.local.restart_policy.IMMEDIATE_SECONDS", 0.0)
    plan = Plan.from_options(
        [sys.executable, "-c", code], max_restarts=1, output_dir=str(tmp_path / "job")
    )
    stream = io.StringIO()
    run_job(plan, stream=stream, environ={**os.environ, MARK: mark})
    return stream.getvalue()


@pytest.mark.parametrize(
    "code",
    [
        # A usage text with another status is the script's own choice: restart as before.
        "import sys; print('usage: t.py'); print('t.py: error: bad', file=sys.stderr); sys.exit(1)",
        # Exit status 2 with no usage error (a failed `assert` of a shell tool, sys.exit(2)).
        "import sys; print('t.py: error: the data is not there'); sys.exit(2)",
    ],
    ids=["usage-then-1", "2-without-usage"],
)
def test_other_failures_are_restarted_as_before(
    tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    shown = _run(tmp_path, mark, code, monkeypatch)
    assert "restart 1 of 1" in shown
    assert "after 1 restarts (--max-restarts 1)" in shown
    assert "refused its arguments" not in shown


def test_a_secret_in_the_refused_arguments_is_not_shown(
    tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # vtrain's own lines are redacted; the replica's own output is the script's to redact.
    code = (
        "import argparse; p = argparse.ArgumentParser(prog='t.py'); "
        "p.parse_args(['--github', 'ghp_abcdefghijklmnop0123'])"
    )
    shown = _run(tmp_path, mark, code, monkeypatch)
    assert "arguments: t.py: error: unrecognized arguments: --github ***\n" in shown
    note = [line for line in shown.splitlines() if "refused its arguments" in line]
    assert len(note) == 2 and not any("ghp_abc" in line for line in note)


def _argparse_output(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[int, list[bytes]]:
    """What `parser` prints and its exit status for `argv`, as a replica's pipe carries it."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        try:
            parser.parse_args(argv)
        except SystemExit as e:
            return int(e.code or 0), [line.encode() for line in err.getvalue().splitlines()]
    return 0, []


_FLAG = st.from_regex(r"--[a-z][a-z0-9_-]{0,12}", fullmatch=True)


@given(
    known=st.lists(_FLAG, max_size=6, unique=True),
    passed=st.lists(st.one_of(_FLAG, st.from_regex(r"[a-z0-9.]{1,8}", fullmatch=True)), max_size=5),
    prog=st.from_regex(r"[a-z][a-z0-9_]{0,10}\.py", fullmatch=True),
    after=st.lists(st.text(st.characters(codec="utf-8"), max_size=40), max_size=3),
)
def test_any_argparse_refusal_is_told_by_its_error_line(
    known: list[str], passed: list[str], prog: str, after: list[str]
) -> None:
    parser = argparse.ArgumentParser(prog=prog)
    for flag in known:
        parser.add_argument(flag)
    code, lines = _argparse_output(parser, passed)
    # What a framework may print at exit, after the error: it must not hide the refusal.
    tail = lines + [a.encode() for a in after if "error: " not in a.lower() and "\n" not in a]
    found = refused_arguments(code, tail)
    if code == 2:
        head = f"{prog}: error: ".encode()
        assert found == next(line.decode() for line in lines if line.startswith(head)).strip()
    else:
        assert found is None


@pytest.mark.parametrize(
    ("code", "lines", "expected"),
    [
        (
            2,
            [b"usage: t.py [-h]", b"t.py: error: unrecognized arguments: --x"],
            "t.py: error: unrecognized arguments: --x",
        ),
        # click
        (
            2,
            [b"Usage: t [OPTIONS]", b"Try 't --help' for help.", b"", b"Error: No such option: -x"],
            "Error: No such option: -x",
        ),
        # argparse on a terminal (Python 3.14 colours it)
        (
            2,
            [b"\x1b[1;34musage: \x1b[0mt.py", b"\x1b[1mt.py: error: \x1b[0mbad"],
            "t.py: error: bad",
        ),
        (2, [b"t.py: error: no usage before it"], None),
        (2, [b"t.py: error: bad", b"usage: after the error"], None),
        (1, [b"usage: t.py", b"t.py: error: bad"], None),
        (-9, [b"usage: t.py", b"t.py: error: bad"], None),
        (2, [], None),
    ],
)
def test_what_counts_as_a_usage_error(code: int, lines: list[bytes], expected: str | None) -> None:
    assert refused_arguments(code, lines) == expected
