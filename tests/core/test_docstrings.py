"""Every public name has a docstring that serves as its reference.

The public API is `vtrain.__all__`, each plugin package's `__all__`, every module
listed there (its module docstring) and its own `__all__`, and the public methods
and properties of the classes among them (`vtrain.plugins.Handle`'s included),
wherever in vtrain's own code they are defined. It is read from the source with
`ast`, nothing imported: the core session installs no framework, and a constant's
docstring (the string under its assignment) exists only in the source.

The rule (`problem`): a docstring of at least 20 characters whose summary (its
first paragraph) ends as a sentence does, with "." or ":"; and for a callable,
each of its parameters named in it. A class's are its constructor's, and a field
with a docstring of its own (the string under it) is documented there. An override
without a docstring of its own reads its base's, as `help()` does.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from test_import_graph import CORE, PLUGINS, module_files

# Dotted module name -> source file, the core's and each plugin's: the import graph's reader.
SOURCES = module_files(CORE, "vtrain") | {
    name: path for top, root in PLUGINS.items() for name, path in module_files(root, top).items()
}
PROPERTIES = ("property", "cached_property")

Function = ast.FunctionDef | ast.AsyncFunctionDef


def problem(doc: str | None, parameters: tuple[str, ...] = ()) -> str | None:
    """What keeps `doc` from serving as the reference of a name taking `parameters`, or None."""
    text = inspect.cleandoc(doc or "").strip()
    if not text:
        return "no docstring"
    if len(text) < 20:
        return f"docstring {text!r} is under 20 characters"
    summary = text.split("\n\n")[0].rstrip()
    if not summary.endswith((".", ":")):
        return f"summary {summary!r} does not end with '.' or ':'"
    unnamed = [p for p in parameters if not names(text, p)]
    if unnamed:
        return "docstring does not name parameter(s) " + ", ".join(unnamed)
    return None


def names(doc: str, parameter: str) -> bool:
    """True when `doc` names `parameter`, as a word (`model` is not named by "models")."""
    return re.search(rf"\b{re.escape(parameter)}\b", doc) is not None


@pytest.mark.parametrize(
    ("doc", "parameters", "said"),
    [
        ("Wait until every trainer reaches this point.", (), None),
        ("The job's run:\n\n`params`, `metrics`.", (), None),
        ("Write `model` into the local `folder` as `name`.", ("model", "folder", "name"), None),
        (None, (), "no docstring"),
        ("   \n  ", (), "no docstring"),
        ("Returns a.", (), "docstring 'Returns a.' is under 20 characters"),
        (
            "The plugin for this name\n\nMore.",
            (),
            "summary 'The plugin for this name' does not end with '.' or ':'",
        ),
        (
            "Write the model to the folder.",
            ("model", "folder", "name"),
            "docstring does not name parameter(s) name",
        ),
        # A parameter is named as a word, not as part of one.
        (
            "Write the models somewhere safe.",
            ("model",),
            "docstring does not name parameter(s) model",
        ),
    ],
    ids=[
        "sentence",
        "summary-with-colon",
        "names-every-parameter",
        "none",
        "blank",
        "too-short",
        "summary-not-a-sentence",
        "a-parameter-unnamed",
        "a-parameter-inside-a-word",
    ],
)
def test_the_rule(doc: str | None, parameters: tuple[str, ...], said: str | None) -> None:
    assert problem(doc, parameters) == said


# -- reading the source --------------------------------------------------------------------


def module_file(module: str) -> Path | None:
    """The source file of `module`, a package's `__init__.py` for a package; None if not ours."""
    path = SOURCES.get(module)
    return path if path is not None and path.suffix == ".py" else None


@cache
def tree(module: str) -> ast.Module:
    """`module`'s parsed source."""
    path = module_file(module)
    assert path is not None, f"no source for {module}"
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def exported(module: str) -> list[str]:
    """The names in `module`'s `__all__`, or none when it has none."""
    for node in tree(module).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            names: list[str] = ast.literal_eval(node.value)
            return names
    return []


@dataclass(frozen=True)
class Definition:
    """Where a public name is defined: a module, a class, a function or an assignment."""

    module: str
    node: ast.AST
    doc: str | None

    @property
    def place(self) -> tuple[str, int]:
        """(module, line): one definition, whatever names reach it."""
        return self.module, getattr(self.node, "lineno", 0)


def attribute_docs(body: list[ast.stmt]) -> dict[str, str]:
    """Name -> the docstring under its assignment (the string statement that follows it)."""
    found = {}
    for statement, after in itertools.pairwise(body):
        targets = (
            statement.targets
            if isinstance(statement, ast.Assign)
            else [statement.target]
            if isinstance(statement, ast.AnnAssign)
            else []
        )
        if (
            isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = after.value.value
    return found


def flattened(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of `body`, those under an `if` (`TYPE_CHECKING`, a version) included."""
    for statement in body:
        if isinstance(statement, ast.If):
            yield from flattened(statement.body)
            yield from flattened(statement.orelse)
        else:
            yield statement


def resolve(module: str, name: str) -> Definition | None:
    """Where `name`, as `module` has it, is defined: followed through its imports."""
    body = tree(module).body
    for statement in flattened(body):
        if isinstance(statement, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            if statement.name == name:
                return Definition(module, statement, ast.get_docstring(statement))
        elif isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return Definition(module, statement, attribute_docs(body).get(name))
        elif isinstance(statement, ast.ImportFrom) and statement.module:
            for alias in statement.names:
                if (alias.asname or alias.name) != name:
                    continue
                submodule = f"{statement.module}.{alias.name}"
                if module_file(submodule) is not None:
                    return Definition(
                        submodule, tree(submodule), ast.get_docstring(tree(submodule))
                    )
                if module_file(statement.module) is None:
                    return None  # the standard library's, or a dependency's
                return resolve(statement.module, alias.name)
    return None


def base_classes(definition: Definition) -> list[Definition]:
    """The classes of vtrain's own code that `definition` derives from, nearest first."""
    assert isinstance(definition.node, ast.ClassDef)
    found = []
    for base in definition.node.bases:
        if isinstance(base, ast.Name):
            parent = resolve(definition.module, base.id)
            if parent is not None and isinstance(parent.node, ast.ClassDef):
                found.append(parent)
                found.extend(base_classes(parent))
    return found


def members(definition: Definition) -> dict[str, Function]:
    """The public methods and properties defined in the body of the class `definition`."""
    assert isinstance(definition.node, ast.ClassDef)
    found: dict[str, Function] = {}
    for node in flattened(definition.node.body):
        if isinstance(node, Function) and not node.name.startswith("_"):
            # The first of a name: a property's getter, not its setter.
            found.setdefault(node.name, node)
    return found


def decorators(node: Function | ast.ClassDef) -> set[str]:
    """The names of `node`'s decorators, a dotted one by its last part (`cached_property`)."""
    names = set()
    for decorator in node.decorator_list:
        while isinstance(decorator, ast.Call):
            decorator = decorator.func
        if isinstance(decorator, ast.Attribute):
            names.add(decorator.attr)
        elif isinstance(decorator, ast.Name):
            names.add(decorator.id)
    return names


def parameters(node: Function) -> tuple[str, ...]:
    """The parameters a caller passes to `node`: `self`, `cls` and unused ones (`_`) left out."""
    arguments = node.args
    named = [*arguments.posonlyargs, *arguments.args]
    if named and not {"staticmethod"} & decorators(node) and named[0].arg in ("self", "cls"):
        named = named[1:]
    starred = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return tuple(
        a.arg for a in [*named, *starred, *arguments.kwonlyargs] if not a.arg.startswith("_")
    )


# -- the public API ------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One public name to check: its dotted name, its docstring and its parameters."""

    name: str
    doc: str | None
    parameters: tuple[str, ...] = ()
    found: bool = True
    """False for a name in an `__all__` that vtrain's source does not define."""


def fields(definition: Definition) -> tuple[str, ...]:
    """A dataclass's fields, the parameters of the `__init__` it is given; none for a class
    that is not one."""
    assert isinstance(definition.node, ast.ClassDef)
    if "dataclass" not in decorators(definition.node):
        return ()
    return tuple(
        node.target.id
        for node in definition.node.body
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and not node.target.id.startswith("_")
        and "ClassVar" not in ast.unparse(node.annotation)
    )


def initializer(definition: Definition) -> Function | None:
    """The `__init__` written in the class `definition`'s body, if any."""
    assert isinstance(definition.node, ast.ClassDef)
    for node in flattened(definition.node.body):
        if isinstance(node, Function) and node.name == "__init__":
            return node
    return None


def joined(*docs: str | None) -> str | None:
    """The docstrings that are there, as paragraphs of one; None when none is."""
    return "\n\n".join(d for d in docs if d) or None


def class_cases(name: str, definition: Definition, listed: set[tuple[str, int]]) -> Iterator[Case]:
    """The class `definition` and its public methods and properties, those of its vtrain bases
    included unless a base is `listed` itself (its members are then listed under its name)."""
    assert isinstance(definition.node, ast.ClassDef)
    init = initializer(definition)
    takes = fields(definition) if init is None else parameters(init)
    # A field that has its own docstring (the string under it) is documented there.
    documented = attribute_docs(definition.node.body)
    yield Case(
        name,
        joined(definition.doc, None if init is None else ast.get_docstring(init)),
        tuple(p for p in takes if p not in documented),
    )
    bases = base_classes(definition)
    named: set[str] = set()
    for owner in [definition, *bases]:
        if owner is not definition and owner.place in listed:
            continue
        for member, node in members(owner).items():
            if member in named:
                continue  # overridden: the subclass's is the one a user calls
            named.add(member)
            doc = ast.get_docstring(node)
            base = next(
                (ast.get_docstring(m[member]) for b in bases if member in (m := members(b))),
                None,
            )
            takes = () if decorators(node) & set(PROPERTIES) else parameters(node)
            if base:
                # An override without a docstring reads its base's, as help() does; one with
                # its own may leave the parameters its base's names to that reference.
                doc = doc or base
                takes = tuple(p for p in takes if not names(base, p))
            yield Case(f"{name}.{member}", doc, takes)


def definitions() -> dict[str, Definition | None]:
    """Dotted name -> where it is defined, for every name in the `__all__` of vtrain, of its
    plugins and of the modules they list; each definition once, under its first name."""
    found: dict[str, Definition | None] = {}
    places: set[tuple[str, int]] = set()
    modules = ["vtrain", *sorted(PLUGINS)]
    while modules:
        module = modules.pop(0)
        for name in exported(module):
            definition = resolve(module, name)
            if definition is not None:
                if definition.place in places:
                    continue
                places.add(definition.place)
                if isinstance(definition.node, ast.Module):
                    modules.append(definition.module)
            found[f"{module}.{name}"] = definition
    return found


def public_api() -> list[Case]:
    """Every public name of vtrain and its four plugins, with its docstring and parameters."""
    found = definitions()
    listed = {d.place for d in found.values() if d is not None}
    cases: list[Case] = []
    for dotted, definition in found.items():
        node = None if definition is None else definition.node
        if definition is None:
            cases.append(Case(dotted, None, found=False))
        elif isinstance(node, ast.ClassDef):
            cases.extend(class_cases(dotted, definition, listed))
        elif isinstance(node, Function):
            cases.append(Case(dotted, definition.doc, parameters(node)))
        else:
            cases.append(Case(dotted, definition.doc))
    return cases


CASES = public_api()


def test_the_list_holds_the_api() -> None:
    names = {case.name for case in CASES}
    assert len(names) == len(CASES), "a name is listed twice"
    expected = {
        "vtrain.ClusterInfo",
        "vtrain.ClusterInfo.from_env",
        "vtrain.CheckpointManager",
        "vtrain.CheckpointManager.save",
        "vtrain.checkpoints",
        "vtrain.data.records",
        "vtrain.hypertune.report",
        "vtrain.plugins.Handle.save_checkpoint",
        "vtrain.plugins.Handle.preempted",
        "vtrain.plugins.Plugin.configure",
        "vtrain.storage.DEFAULT_GCS_MOUNT",
        "vtrain.storage.Location.read_bytes",
        "vtrain_pytorch.PyTorchPlugin",
        "vtrain_pytorch.PyTorchPlugin.configure",
        "vtrain_pytorch.TorchHandle",
        "vtrain_pytorch.TorchHandle.wrap",
        "vtrain_tensorflow.TensorFlowPlugin",
        "vtrain_tensorflow.TensorFlowPlugin.configure",
        "vtrain_tensorflow.TensorFlowHandle",
        "vtrain_tensorflow.TensorFlowHandle.callbacks",
        "vtrain_mxnet.MXNetPlugin",
        "vtrain_mxnet.MXNetPlugin.configure",
        "vtrain_mxnet.MXNetHandle",
        "vtrain_mxnet.MXNetHandle.trainer",
        "vtrain_xgboost.XGBoostPlugin",
        "vtrain_xgboost.XGBoostPlugin.configure",
        "vtrain_xgboost.XGBoostHandle",
        "vtrain_xgboost.XGBoostHandle.dmatrix",
    }
    assert expected <= names, sorted(expected - names)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_public_name_has_a_docstring(case: Case) -> None:
    assert case.found, f"{case.name}: in an __all__, but not defined in vtrain's source"
    said = problem(case.doc, case.parameters)
    assert said is None, f"{case.name}: {said}"
