"""Where a command line's program ends and the program's own arguments begin.

`python -m trainer.task --epochs 3` is the program `python -m trainer.task`
and its arguments `--epochs 3`; `/app/train --epochs 3` is `/app/train` and
`--epochs 3`. A rehearsal puts the local COMMAND in place of the document's
program and keeps the arguments, however the document split them between
`command` and `args` (render writes `command: [python]`, a hand-written job
`command: [python, -m, trainer.task]`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

# python, python3, python3.11, pythonw: the interpreters whose command line CPython defines.
_PYTHON = re.compile(r"python[0-9.]*w?")
# One-letter options that take a value, attached (-Wignore) or as the next word (-W ignore).
_WITH_VALUE = "WX"
# ... and the two that end the interpreter's options: the rest of the line is the program's.
_PROGRAM = "cm"
_LONG_WITH_VALUE = ("--check-hash-based-pycs",)


def is_python(word: str) -> bool:
    """True when `word` runs a Python interpreter (`python3`, `/venv/bin/python`)."""
    return bool(_PYTHON.fullmatch(os.path.basename(word)))


def python_program_end(words: Sequence[str]) -> int | None:
    """The index just past the script, `-m MODULE` or `-c CODE` of the Python command line
    `words` (`words[0]` the interpreter); None when it names none (the interpreter alone)."""
    i = 1
    while i < len(words):
        word = words[i]
        if word == "--":  # the end of the options: the script follows
            return min(i + 2, len(words))
        if word == "-" or not word.startswith("-"):  # a script file, or "-" for stdin
            return i + 1
        if word.startswith("--"):
            i += 2 if word in _LONG_WITH_VALUE else 1
            continue
        step = 1
        for j, letter in enumerate(word[1:], 1):
            attached = j + 1 < len(word)
            if letter in _PROGRAM:
                return min(i + (1 if attached else 2), len(words))
            if letter in _WITH_VALUE:
                step = 1 if attached else 2
                break
        i += step
    return None


def program_length(command: Sequence[str], args: Sequence[str]) -> int:
    """How many words of ``[*command, *args]`` are the program: for a Python interpreter, up
    to its script or module, wherever `command` ends; for any other program, `command`."""
    if command and is_python(command[0]):
        end = python_program_end([*command, *args])
        # `command: [python, task.py, --epochs=3]` holds an argument of the script too.
        return len(command) if end is None else end
    # What `bash -c …` or `torchrun … train.py` takes is theirs to say: the command is it.
    return len(command)


def interpreter_alone(command: Sequence[str]) -> bool:
    """True for a Python interpreter with no script, module or code (`-- .venv/bin/python`)."""
    return bool(command) and is_python(command[0]) and python_program_end(command) is None
