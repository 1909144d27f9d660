"""The core's import graph, read from the source (nothing is imported): no cycle, and layers.

A package here is a sub-package or a top-level module of vtrain (`vtrain.storage`,
`vtrain.context`), plus the root `vtrain` itself. Every import counts, also the lazy
ones inside functions (a lazy import is still a dependency; it only moves the cost),
and so does an import by name: a string that names a vtrain module, or an f-string
that starts with one's dotted prefix. Imports under `if TYPE_CHECKING:` do not count for
the layers: they never run, and a type may name a higher layer's class without depending on
it. Between modules they count: two modules that name each other's types are one idea cut
in two, and no cycle at all, typed or run, is allowed between modules of the core or of a
plugin.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "core"
# Each plugin's package, beside the core: the same reader checks it for cycles.
PLUGINS = {
    f"vtrain_{name}": REPO / "plugins" / name
    for name in ("pytorch", "tensorflow", "mxnet", "xgboost")
}

# Lowest first; a module may import its own layer and those below it, never one above.
# A new package must be given a place here.
LAYERS: tuple[tuple[str, ...], ...] = (
    # Words every module uses: errors, values, the variables vtrain itself sets.
    (
        "vtrain.printable",
        "vtrain.redact",
        "vtrain.frozen",
        "vtrain.os_hints",
        "vtrain.errors",
        "vtrain.log",
        "vtrain.variables",
        "vtrain.yaml_errors",
        "vtrain.documents",
        "vtrain.document_strings",
        "vtrain.install_hints",
        "vtrain.process_start",
        "vtrain.posix_timer",
        "vtrain.json_lines",
    ),
    # Where bytes live; knows nothing of the run.
    ("vtrain.storage",),
    # Who this replica is, then where its run writes.
    ("vtrain.cluster",),
    ("vtrain.context",),
    # Each process's timeline: what training code records as it goes (and reads back).
    ("vtrain.timeline",),
    # What training code calls.
    (
        "vtrain.checkpoints",
        "vtrain.data",
        "vtrain.hypertune",
        "vtrain.preemption",
        "vtrain.progress",
        "vtrain.track",
        "vtrain.trainjob",
        "vtrain.outputs",
    ),
    # The plugin contract and registry, built on all of the above.
    ("vtrain.plugins", "vtrain.excepthook"),
    # The launchers: the local cluster, the study runner, the platforms' jobs.
    ("vtrain.local", "vtrain.tune", "vtrain.submit", "vtrain.report"),
    ("vtrain.cli",),
    # The public face: `import vtrain` and `python -m vtrain`.
    ("vtrain", "vtrain.__main__"),
)


@dataclass(frozen=True)
class Edge:
    """`source` imports `target` at `line`."""

    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} (line {self.line})"


def module_files(root: Path = CORE, top: str = "vtrain") -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package `top` under `root`: its
    Python modules, and its C modules by their type stubs (.pyi), which import nothing."""
    found = {}
    for path in sorted([*(root / top).rglob("*.py"), *(root / top).rglob("*.pyi")]):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking(test: ast.expr) -> bool:
    # Both `if TYPE_CHECKING:` (the core's own `TYPE_CHECKING = False`, or typing's) and
    # `if typing.TYPE_CHECKING:`.
    name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
    return name == "TYPE_CHECKING"


def _nodes(tree: ast.AST, typed: bool = False) -> Iterator[ast.AST]:
    """Every node that runs: all of them but the bodies of `if TYPE_CHECKING:` (with `typed`,
    those too)."""
    for child in ast.iter_child_nodes(tree):
        if not typed and isinstance(child, ast.If) and _type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from _nodes(other, typed)
            continue
        yield child
        yield from _nodes(child, typed)


def _named(module: str, known: Mapping[str, Path], top: str) -> str | None:
    """The most specific known module `module` names (an attribute's owner), if one of `top`."""
    if module != top and not module.startswith(f"{top}."):
        return None
    while module not in known:
        module = module.rpartition(".")[0]
    return module


def imports(
    module: str, known: Mapping[str, Path], top: str = "vtrain", typed: bool = False
) -> Iterator[Edge]:
    """The modules of `top` that `module` imports, lazily or not, by statement or by name."""
    path = known[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in _nodes(ast.parse(path.read_text(), str(path)), typed):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from vtrain.storage import atomic` imports the module vtrain.storage.atomic.
            targets = [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # A table of modules loaded by name; bare "vtrain" is the distribution's name.
            if node.value != top and node.value in known:
                targets = [node.value]
        elif isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if isinstance(first, ast.Constant) and str(first.value).startswith(f"{top}."):
                prefix = str(first.value)
                targets = [m for m in known if m.startswith(prefix) and m != prefix]
        for target in targets:
            named = _named(target, known, top)
            if named is not None and named != module:
                yield Edge(module, named, getattr(node, "lineno", 0))


def package_of(module: str) -> str:
    """`vtrain.storage.gcs` -> `vtrain.storage`; `vtrain` stays `vtrain`."""
    return ".".join(module.split(".")[:2])


def graph(root: Path = CORE, top: str = "vtrain", typed: bool = False) -> list[Edge]:
    """Every import edge between the modules of the package `top` under `root`."""
    known = module_files(root, top)
    return [edge for module in known for edge in imports(module, known, top, typed)]


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan's algorithm)."""
    successors: dict[str, set[str]] = {}
    for source, target in edges:
        if source != target:
            successors.setdefault(source, set()).add(target)
            successors.setdefault(target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(successors[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(successors):
        if node not in index:
            visit(node)
    return found


def _explain(component: list[str], edges: Iterable[Edge], node: Callable[[str], str]) -> str:
    """One cycle and the imports that make it."""
    members = set(component)
    inside = sorted(
        {
            str(e)
            for e in edges
            if {node(e.source), node(e.target)} <= members and node(e.source) != node(e.target)
        }
    )
    return " <-> ".join(component) + ":\n    " + "\n    ".join(inside)


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return graph()


def test_every_package_has_one_layer() -> None:
    placed = [p for layer in LAYERS for p in layer]
    assert len(placed) == len(set(placed)), "a package is in two layers"
    packages = {package_of(m) for m in module_files()}
    assert not packages - set(placed), "give these packages a layer in LAYERS"
    assert not set(placed) - packages, "these packages in LAYERS do not exist"


def test_no_cycle_between_packages(edges: list[Edge]) -> None:
    by_package = [(package_of(e.source), package_of(e.target)) for e in edges]
    found = cycles(by_package)
    assert not found, "\n".join(_explain(c, edges, package_of) for c in found)


def test_no_cycle_between_modules() -> None:
    edges = graph(typed=True)
    found = cycles((e.source, e.target) for e in edges)
    assert not found, "\n".join(_explain(c, edges, str) for c in found)


@pytest.mark.parametrize("top", sorted(PLUGINS))
def test_no_cycle_inside_a_plugin(top: str) -> None:
    edges = graph(PLUGINS[top], top, typed=True)
    found = cycles((e.source, e.target) for e in edges)
    assert not found, "\n".join(_explain(c, edges, str) for c in found)


def test_the_core_imports_no_plugin() -> None:
    # Plugins are found through their entry points; the core names none of them.
    found = []
    for module, path in module_files().items():
        for node in _nodes(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            found += [f"{module} (line {node.lineno})" for n in names if n.startswith("vtrain_")]
    assert not found, "\n".join(found)


def test_no_module_imports_a_higher_layer(edges: list[Edge]) -> None:
    layer = {package: n for n, members in enumerate(LAYERS) for package in members}
    upward = [
        f"{e} (layer {layer[package_of(e.source)]} -> {layer[package_of(e.target)]})"
        for e in edges
        if layer[package_of(e.target)] > layer[package_of(e.source)]
    ]
    assert not upward, "\n".join(upward)


def test_the_reader_sees_every_kind_of_import(tmp_path: Path) -> None:
    # The graph is only as good as the parser: a kind of import it missed would hide a cycle.
    package = tmp_path / "vtrain"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("")
    (package / "typed.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text("")
    (package / "sub" / "b.py").write_text(
        "import vtrain.low\n"
        "from . import a\n"
        "from .. import typed as t\n"
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n"
        "    from vtrain.low import nothing\n"
        "else:\n"
        "    from vtrain.sub.a import name\n"
        "def later(kind):\n"
        "    import importlib\n"
        "    importlib.import_module('vtrain.low')\n"
        "    return importlib.import_module(f'vtrain.sub.{kind}')\n"
    )
    found = {(e.target, e.line) for e in graph(tmp_path) if e.source == "vtrain.sub.b"}
    assert found == {
        ("vtrain.low", 1),
        ("vtrain.sub.a", 2),
        ("vtrain.typed", 3),
        ("vtrain.sub.a", 8),
        ("vtrain.low", 11),
        ("vtrain.sub.a", 12),
    }
    # Typed, the import under `if TYPE_CHECKING:` (line 6) counts too: a cycle through it is one.
    typed = {(e.target, e.line) for e in graph(tmp_path, typed=True) if e.source == "vtrain.sub.b"}
    assert typed == found | {("vtrain.low", 6)}
