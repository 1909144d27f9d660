"""What a command after `vtrain local run --job` means: it stands in for the document's program
(`python -m trainer.task`, the image's ENTRYPOINT), and the document's args follow it, once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vtrain.errors import UsageError
from vtrain.submit.program import interpreter_alone, python_program_end
from vtrain.submit.rehearsal import replica_command

LOCAL = ["/venv/bin/python", "-m", "trainer.task"]

TABLE = [
    # (document command, document args, local command, what runs)
    # `vtrain render … -- python -m trainer.task --epochs 3` writes command [python].
    (["python"], ["-m", "trainer.task", "--epochs", "3"], LOCAL, [*LOCAL, "--epochs", "3"]),
    # A hand-written job keeps the module in its command.
    (["python", "-m", "trainer.task"], ["--epochs", "3"], LOCAL, [*LOCAL, "--epochs", "3"]),
    (["python3", "-u", "task.py"], ["--epochs", "3"], LOCAL, [*LOCAL, "--epochs", "3"]),
    (["python", "task.py", "--epochs=3"], ["--lr=1"], LOCAL, [*LOCAL, "--epochs=3", "--lr=1"]),
    (["bash", "-c", "python task.py"], ["--lr=1"], LOCAL, [*LOCAL, "--lr=1"]),
    (
        ["python"],
        ["-W", "ignore", "-mtrainer.task", "--epochs", "3"],
        LOCAL,
        [*LOCAL, "--epochs", "3"],
    ),
    (["python"], ["--", "task.py", "-m", "x"], LOCAL, [*LOCAL, "-m", "x"]),
    # The image's ENTRYPOINT: every arg is the program's.
    ([], ["--epochs", "3"], LOCAL, [*LOCAL, "--epochs", "3"]),
    # Another program: its command is the program.
    (["/app/train"], ["--epochs", "3"], LOCAL, [*LOCAL, "--epochs", "3"]),
    # An interpreter alone runs the document's script or module with this machine's Python.
    (
        ["python"],
        ["-m", "trainer.task", "--epochs", "3"],
        ["/venv/bin/python"],
        ["/venv/bin/python", "-m", "trainer.task", "--epochs", "3"],
    ),
    (
        ["python", "-u"],
        ["task.py", "--epochs", "3"],
        ["/venv/bin/python", "-X", "dev"],
        ["/venv/bin/python", "-X", "dev", "-u", "task.py", "--epochs", "3"],
    ),
    # No local command: the document's own.
    (
        ["python"],
        ["-m", "trainer.task", "--epochs", "3"],
        [],
        ["python", "-m", "trainer.task", "--epochs", "3"],
    ),
]


@pytest.mark.parametrize(("command", "args", "local", "expected"), TABLE)
def test_the_local_command_stands_in_for_the_documents_program(
    command: list[str], args: list[str], local: list[str], expected: list[str]
) -> None:
    assert replica_command("chief", command, args, local, "job.yaml") == expected


def test_an_entrypoint_with_no_local_command_is_refused() -> None:
    with pytest.raises(UsageError, match=r"COMMAND: the worker pool runs its image's ENTRYPOINT"):
        replica_command("worker", [], ["--epochs", "3"], [], "job.yaml")


_WORD = st.from_regex(r"[a-z][a-z0-9_.]{0,8}", fullmatch=True)
_OPTIONS = st.lists(
    st.one_of(
        st.sampled_from(["-u", "-B", "-O", "-OO", "-s", "-E", "-I", "-bb", "-q"]),
        st.builds(lambda v: ["-W", v], st.sampled_from(["ignore", "error"])),
        st.builds(lambda v: f"-X{v}", st.sampled_from(["dev", "utf8"])),
        st.just(["--check-hash-based-pycs", "default"]),
    ),
    max_size=4,
)
_PROGRAMS = st.one_of(
    st.builds(lambda m: ["-m", m], _WORD),
    st.builds(lambda m: [f"-m{m}"], _WORD),
    st.builds(lambda s: [f"{s}.py"], _WORD),
    st.builds(lambda s: [f"/srv/{s}.py"], _WORD),
    st.builds(lambda c: ["-c", f"import {c}"], _WORD),
    st.builds(lambda s: ["--", f"{s}.py"], _WORD),
)
# The program's own arguments may look like anything an interpreter would take.
_ARGS = st.lists(st.one_of(_WORD, st.sampled_from(["-m", "-c", "-u", "--", "-W", "x.py"])))


def _flat(options: list[str | list[str]]) -> list[str]:
    return [w for o in options for w in ([o] if isinstance(o, str) else o)]


@given(
    interpreter=st.sampled_from(["python", "python3", "python3.11", "/usr/bin/python3"]),
    options=_OPTIONS,
    program=_PROGRAMS,
    args=_ARGS,
    split=st.integers(min_value=1),
    local_is_interpreter=st.booleans(),
)
def test_any_split_of_a_python_command_line_keeps_the_programs_args_once(
    interpreter: str,
    options: list[str | list[str]],
    program: list[str],
    args: list[str],
    split: int,
    local_is_interpreter: bool,
) -> None:
    head = [interpreter, *_flat(options), *program]
    line = [*head, *args]
    assert python_program_end(line) == len(head)
    split = min(split, len(line))  # however the document splits the line, command keeps word 0
    command, rest = line[:split], line[split:]
    if local_is_interpreter:
        local = ["/venv/bin/python"]
        assert interpreter_alone(local)
        expected = [*local, *line[1:]]
    else:
        local = LOCAL
        assert not interpreter_alone(local)
        expected = [*LOCAL, *args]
    assert replica_command("chief", command, rest, local, "job.yaml") == expected


def _job(tmp_path: Path, container: dict[str, object]) -> Path:
    job = tmp_path / "job.json"
    pool = {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1"}
    job.write_text(json.dumps({"workerPoolSpecs": [{**pool, "containerSpec": container}]}))
    return job


def _rehearse(tmp_path: Path, job: Path, *local: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--job",
            str(job),
            "--output-dir",
            str(tmp_path / "out"),
            "--",
            *local,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def test_the_rehearsal_says_what_it_runs_first_with_secrets_hidden(tmp_path: Path) -> None:
    container = {
        "imageUri": "gcr.io/p/t:1",
        "command": ["python"],
        "args": ["t.py", "--epochs", "3", "--api-token", "s3cr3t-value"],
    }
    (tmp_path / "t.py").write_text("import sys; print('ARGV', sys.argv[1:])\n")
    done = _rehearse(tmp_path, _job(tmp_path, container), sys.executable, "t.py")
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stderr.splitlines()[0]
    assert first == (
        f"vtrain local: command: {sys.executable} t.py --epochs 3 --api-token *** "
        "(the document's args after your command)"
    )
    assert "s3cr3t-value" not in done.stderr
    assert "ARGV ['--epochs', '3', '--api-token', 's3cr3t-value']" in done.stdout
    # An interpreter alone: this machine's Python runs the document's script.
    done = _rehearse(tmp_path, _job(tmp_path, container), sys.executable)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.splitlines()[0].endswith(
        "t.py --epochs 3 --api-token *** (your interpreter, then the document's script and args)"
    )
    assert "ARGV ['--epochs', '3', '--api-token', 's3cr3t-value']" in done.stdout


def test_submit_with_a_job_file_takes_no_command(tmp_path: Path) -> None:
    job = _job(tmp_path, {"imageUri": "gcr.io/p/t:1", "command": ["python"], "args": ["t.py"]})
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "submit",
            "vertex",
            "--job",
            str(job),
            "--project",
            "p12345",
            "--",
            "python",
            "-m",
            "trainer.task",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "COMMAND: the job file says this" in done.stderr
