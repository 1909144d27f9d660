"""One voice: vtrain speaks through `logging`, and a program silences, raises or redirects it
with the standard configuration. Each case runs in a fresh interpreter, as a training script."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = [REPO / "core" / "vtrain", *sorted((REPO / "plugins").glob("*/vtrain_*"))]
# The command line's one module that writes to the terminal; everything else logs.
PRINTS = {REPO / "core" / "vtrain" / "cli" / "output.py"}

# A note from the core and one from a plugin's module, as vtrain's code writes them.
SCRIPT = """
import logging, sys
{setup}
from vtrain.log import logger
logger("vtrain.checkpoints.manager").info("vtrain: a note")
logger("vtrain_pytorch.state").warning("vtrain: a warning")
logger("vtrain.local.supervisor").debug("vtrain: a detail")
"""


def _run(setup: str) -> subprocess.CompletedProcess[str]:
    code = SCRIPT.format(setup=setup)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )


@pytest.mark.parametrize(
    ("setup", "stderr", "stdout"),
    [
        pytest.param("", "vtrain: a note\nvtrain: a warning\n", "", id="default: notes on stderr"),
        pytest.param(
            'logging.getLogger("vtrain").setLevel(logging.WARNING)',
            "vtrain: a warning\n",
            "",
            id="silenced to warnings",
        ),
        pytest.param(
            'logging.getLogger("vtrain").setLevel(logging.CRITICAL)', "", "", id="silenced"
        ),
        pytest.param(
            'logging.getLogger("vtrain").setLevel(logging.DEBUG)',
            "vtrain: a note\nvtrain: a warning\nvtrain: a detail\n",
            "",
            id="raised to debug",
        ),
        pytest.param(
            'logging.basicConfig(stream=sys.stdout, format="%(levelname)s %(name)s %(message)s")',
            "",
            "INFO vtrain.checkpoints.manager vtrain: a note\n"
            "WARNING vtrain.pytorch.state vtrain: a warning\n",
            id="redirected by the program's own configuration",
        ),
        pytest.param(
            'logging.info("a library logs before anything is configured")',
            "vtrain: a note\nvtrain: a warning\n",
            "",
            id="plain lines after Python configured the root unasked",
        ),
        pytest.param(
            "class Mine(logging.Handler):\n"
            "    def emit(self, record): print('mine:', record.name, record.getMessage())\n"
            'top = logging.getLogger("vtrain"); top.addHandler(Mine()); top.propagate = False\n'
            "logging.basicConfig(stream=sys.stderr)",
            "",
            "mine: vtrain.checkpoints.manager vtrain: a note\n"
            "mine: vtrain.pytorch.state vtrain: a warning\n",
            id="a handler of the program's own, alone",
        ),
    ],
)
def test_a_program_decides_where_vtrain_speaks(setup: str, stderr: str, stdout: str) -> None:
    done = _run(setup)
    assert (done.stderr, done.stdout) == (stderr, stdout)


def _calls(path: Path) -> list[str]:
    """Every `print(...)` and `warnings.warn(...)` call in one source file, with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "print" and path not in PRINTS:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: print")
        # warnings.warn(...), and warn(...) after `from warnings import warn`.
        attribute = isinstance(f, ast.Attribute) and getattr(f.value, "id", "") == "warnings"
        if (attribute and f.attr == "warn") or (isinstance(f, ast.Name) and f.id == "warn"):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: warnings.warn")
    return found


def test_nothing_but_the_command_lines_output_module_prints() -> None:
    found = [
        call for root in SOURCES for path in sorted(root.rglob("*.py")) for call in _calls(path)
    ]
    assert not found, "speak through vtrain.log instead:\n" + "\n".join(found)
