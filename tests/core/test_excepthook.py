"""`vtrain.one_line_errors()`: what a person can fix is one line; a bug keeps its traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CONSTRAINTS = Path(__file__).resolve().parents[2] / "tests" / "constraints.txt"

TOP = "import vtrain\nvtrain.one_line_errors()\n"


def run(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "train.py"
    script.write_text(TOP + body)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True)


@pytest.mark.parametrize(
    ("body", "line"),
    [
        # The examples' case: the framework is imported after the hook, and is missing here.
        (
            "import torch\n",
            "train.py: error: 'torch', needed for this script, is not installed. "
            f'Hint: pip install -c {CONSTRAINTS} "torch>=2.2" (as vtrain[pytorch] asks for it)\n',
        ),
        (
            "from lightning.pytorch import Trainer\n",
            "train.py: error: 'lightning', needed for this script, is not installed. "
            f'Hint: pip install -c {CONSTRAINTS} "lightning>=2.2" '
            "(as vtrain[lightning] asks for it)\n",
        ),
        (
            "raise vtrain.UsageError('not a count', source='--steps', value='x')\n",
            "train.py: error: --steps: not a count (got 'x')\n",
        ),
        (
            "vtrain.plugins.get('nope')\n",
            None,  # the registry's own message, whatever it lists
        ),
    ],
)
def test_a_vtrain_error_or_missing_framework_is_one_line(
    tmp_path: Path, body: str, line: str | None
) -> None:
    done = run(tmp_path, body)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    if line is not None:
        assert done.stderr == line
    else:
        assert done.stderr.startswith("train.py: error: ")


@pytest.mark.parametrize(
    "body", ["import no_such_module_of_yours\n", "raise RuntimeError('a bug')\n"]
)
def test_anything_else_keeps_its_traceback(tmp_path: Path, body: str) -> None:
    done = run(tmp_path, body)
    assert done.returncode == 1
    assert done.stderr.startswith("Traceback (most recent call last):")


def test_calling_it_twice_installs_it_once(tmp_path: Path) -> None:
    done = run(tmp_path, "vtrain.one_line_errors()\nraise vtrain.ConfigError('bad')\n")
    assert done.stderr == "train.py: error: bad\n"


def test_the_examples_use_it_before_their_framework() -> None:
    examples = Path(__file__).parents[2] / "examples"
    for script in examples.glob("*/train.py"):
        text = script.read_text()
        assert "vtrain.one_line_errors()" in text, script
        assert "vtrain.print_outputs()" in text, script
        hook = text.index("vtrain.one_line_errors()")
        frameworks = ("import torch", "import lightning", "import xgboost", "import numpy")
        assert all(f not in text[:hook] for f in frameworks), script
