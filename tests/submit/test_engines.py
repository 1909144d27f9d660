"""An engine is one folder that exports one `ENGINE`: nothing outside it names the engine but
the one table, and an engine added to that table gets its sub-command, flags, rules and
renderer with no other edit."""

from __future__ import annotations

import ast
import importlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from conftest import Result

from vtrain.submit import engines
from vtrain.submit.engine import Engine, Flag
from vtrain.submit.problems import Problems, Rules
from vtrain.submit.request import JobRequest
from vtrain.tune.study import Study

Run = Callable[..., Result]
CORE = Path(engines.__file__).resolve().parents[2]
SUBMIT = CORE / "vtrain" / "submit"
FOLDERS = tuple(engines.ENGINES)


def test_each_engine_is_the_engine_its_folder_exports() -> None:
    for name, engine in engines.ENGINES.items():
        assert engine.name == name
        assert importlib.import_module(f"vtrain.submit.{name}").ENGINE is engine
        assert (SUBMIT / name / "__init__.py").is_file()


def _imported(path: Path) -> Iterator[tuple[str, int]]:
    """The dotted names `path` imports (lazy imports too), each with its line."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, node.lineno
            yield from ((f"{node.module}.{alias.name}", node.lineno) for alias in node.names)


def _outside_the_folders() -> Iterator[Path]:
    yield from (
        p for p in sorted(SUBMIT.rglob("*.py")) if p.relative_to(SUBMIT).parts[0] not in FOLDERS
    )
    yield from sorted((CORE / "vtrain" / "cli").glob("*.py"))
    yield from sorted((CORE / "vtrain" / "local").rglob("*.py"))


def test_only_the_table_imports_an_engine_and_only_its_folder_as_a_whole() -> None:
    # Engine-specific code outside its folder would have to import the folder's modules.
    found = []
    for path in _outside_the_folders():
        for name, line in _imported(path):
            parts = name.split(".")
            if parts[:2] != ["vtrain", "submit"] or len(parts) < 3 or parts[2] not in FOLDERS:
                continue
            if path == SUBMIT / "engines.py" and len(parts) == 3:
                continue  # the table: `from vtrain.submit import aiplatform, kubeflow, vertex`
            found.append(f"{path.relative_to(CORE)}:{line} imports {name}")
    assert not found, "\n".join(found)


def test_the_table_names_each_engine_on_one_line() -> None:
    lines = (SUBMIT / "engines.py").read_text().splitlines()
    for name in FOLDERS:
        code = [line for line in lines if f"{name}.ENGINE" in line]
        assert len(code) == 1, (name, code)


# A fourth engine: a folder would hold this, and engines.py would list its ENGINE.
def _check(request: JobRequest, study: Study | None, problems: Problems) -> None:
    if request.ps:
        problems.bad("--ps", "the fourth engine runs no parameter servers", request.ps, "0")


def _render(options: Any) -> tuple[str, dict[str, Any]]:
    pools = {p.role: p.count for p in options.pools if p.count}
    machine = options.pool("chief").machine_type
    return "Thing", {"thing": options.name, "pools": pools, "machine": machine}


FOURTH = Engine(
    name="fourth",
    about="a job for a fourth engine",
    rules=Rules(check=_check, elsewhere=lambda request, problems: None, default_machine="m-4"),
    title="Fourth",
    flags=(Flag("--fourth-colour", {"metavar": "COLOUR", "help": "the fourth engine's own"}),),
    render=_render,
    recognizes=lambda document: "thing" in document,
    load=lambda document, source, name: pytest.fail("not read here"),
    shape="thing",
    rename=lambda document, name: {**document, "thing": name},
    rehearse=lambda job, local, trial, output: pytest.fail("not rehearsed here"),
)


@pytest.fixture
def fourth(monkeypatch: pytest.MonkeyPatch) -> None:
    """ENGINES with the fourth engine listed, wherever a module holds the table."""
    table = MappingProxyType({**engines.ENGINES, FOURTH.name: FOURTH})
    rules = MappingProxyType({name: e.rules for name, e in table.items()})
    # By name, not identity: a test that imports vtrain afresh leaves other copies of the table.
    for name, module in list(sys.modules.items()):
        if not name.startswith("vtrain.submit") and name != "vtrain.cli.submit":
            continue
        for attribute, value in (("ENGINES", table), ("RULES", rules)):
            if isinstance(getattr(module, attribute, None), MappingProxyType):
                monkeypatch.setattr(module, attribute, value)


JOB = ["--name", "j", "--image", "gcr.io/p/t:1", "--workers", "1", "--format", "json"]


@pytest.mark.usefixtures("fourth")
def test_a_fourth_engine_in_the_table_gets_its_command_flags_rules_and_render(
    vtrain: Run,
) -> None:
    done = vtrain("render", "fourth", *JOB, "--fourth-colour", "red", "--", "python", "t.py")
    assert done.status == 0, done.err
    assert json.loads(done.out) == {
        "thing": "j",
        "pools": {"chief": 1, "worker": 1},
        "machine": "m-4",
    }
    refused = vtrain("render", "fourth", *JOB, "--ps", "1", "--", "python", "t.py")
    assert refused.status == 2
    assert "--ps: the fourth engine runs no parameter servers (got 1)" in refused.err
    # Its flag is on every platform's command, as every engine's is.
    elsewhere = vtrain("render", "vertex", *JOB, "--fourth-colour", "red", "--", "python", "t.py")
    assert elsewhere.status == 0, elsewhere.err
