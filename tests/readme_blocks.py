"""The command blocks of the README and of every docs page, read from the pages themselves,
and a way to run one as written.

A `<!-- readme-test: SESSION -->` line above a fenced block says which test
session runs it: `core`, `submit`, or a framework (`pytorch`, `tensorflow`,
`mxnet`, `xgboost`) whose session has that framework; `skip (why)` for a block
no CI can run, naming its runnable twin; `bench` for a benchmark's commands
(minutes of a whole machine, run by hand: the core session checks that each
names a script of bench/ and flags it takes); `same as PATH` for a block that
shows a file of the repository. Every bash or python block must say one
(tests/core/test_readme.py), so a block added or edited in a page is a block tested.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
COMMANDS = ("bash", "python")
SESSIONS = ("core", "submit", "pytorch", "tensorflow", "mxnet", "xgboost")
BENCH = "bench"

# A fence opens a line and closes at its own indentation: a block indented in a list item
# must not run on to the next block's closing fence, hiding that block from the tests.
_BLOCK = re.compile(
    r"(?:<!-- readme-test: (?P<marker>[^>]*?) -->\n)?^(?P<indent> *)```(?P<language>\w*)\n"
    r"(?P<text>.*?)^(?P=indent)```$",
    re.MULTILINE | re.DOTALL,
)

# `pip` in a block installs nothing: the session installed it before the tests. This one
# checks that the extras it names exist, and that the session has every package they
# install, so that a block runs in the session whose packages it installs.
_PIP = f"""#!{sys.executable}
import re, sys
from importlib.metadata import PackageNotFoundError, metadata, requires, version
extras = metadata("vtrain").get_all("Provides-Extra")
args = sys.argv[1:]
for flag, value in zip(args, args[1:]):
    if flag == "-c" and not open(value):
        sys.exit(f"pip: no constraints file {{value}}")
named = [
    extra
    for arg in args if "[" in arg
    for extra in arg[arg.index("[") + 1 : arg.index("]")].split(",")
]
for extra in named:
    if extra not in extras:
        sys.exit(f"pip: vtrain has no extra {{extra!r}}")

def packages(extra, seen):
    for requirement in requires("vtrain") or []:
        if requirement.partition(";")[2].replace('"', "'").strip() == f"extra == '{{extra}}'":
            name = re.match(r"[A-Za-z0-9._-]+", requirement)[0]
            if name != "vtrain":
                yield name
            for inner in re.findall(r"\\[([^]]*)\\]", requirement.split(";")[0]):
                for nested in inner.split(","):
                    if nested not in seen:
                        seen.add(nested)
                        yield from packages(nested, seen)

for extra in named:
    for name in packages(extra, {{extra}}):
        try:
            version(name)
        except PackageNotFoundError:
            sys.exit(f"pip: this session has no {{name}}, which vtrain[{{extra}}] installs")
"""


@dataclass(frozen=True)
class Block:
    """One fenced block of the README or of a docs page."""

    language: str
    text: str
    marker: str | None
    line: int
    page: str = "README.md"
    """The page's path inside the repository."""

    @property
    def session(self) -> str | None:
        """The session that runs it; None for a skipped block or one that is no command."""
        return self.marker if self.marker in SESSIONS else None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """The README, then every docs page, in path order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def blocks() -> list[Block]:
    """Every fenced block of every page, in order."""
    found = []
    for page in pages():
        text = page.read_text()
        name = page.relative_to(ROOT).as_posix()
        found += [
            Block(m["language"], m["text"], m["marker"], text.count("\n", 0, m.start("text")), name)
            for m in _BLOCK.finditer(text)
        ]
    return found


def blocks_for(session: str) -> list[Block]:
    """The command blocks `session` runs."""
    return [b for b in blocks() if b.session == session]


def run_block(block: Block, folder: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run `block` in `folder` as a reader would paste it, with this interpreter's `vtrain`."""
    (folder / "examples").symlink_to(ROOT / "examples")
    (folder / "tests").symlink_to(ROOT / "tests")
    shims = folder / ".shims"
    shims.mkdir()
    (shims / "pip").write_text(_PIP)
    (shims / "pip").chmod(0o755)
    path = os.pathsep.join([str(shims), str(Path(sys.executable).parent), os.environ["PATH"]])
    env = {**os.environ, "PATH": path, "NO_COLOR": "1"}
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)  # tests/tensorflow's conftest sets it; a reader has not
    command = (
        ["bash", "-e", "-c", block.text]
        if block.language == "bash"
        else [sys.executable, "-c", block.text]
    )
    return subprocess.run(
        command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout
    )


def check_clean_run(block: Block, done: subprocess.CompletedProcess[str]) -> str:
    """What every session asks of a block: it succeeded, without a traceback, and said where
    its outputs went; returns stdout and stderr together."""
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    if "vtrain local run" in block.text:  # the job ends with where its outputs are
        assert "outputs of this job:\n  model " in done.stdout
        assert "vtrain-output/local/" in done.stdout.split("outputs of this job:")[1]
    if "python examples/" in block.text.split("vtrain local run")[0]:  # a run alone, too
        assert "outputs of this run:" in done.stdout
    return output
