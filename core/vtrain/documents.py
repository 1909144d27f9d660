"""Every document vtrain reads (job files, study files), read within bounds, or refused in one line.

A YAML document is a graph: an alias (`*a`) names what its anchor (`&a`) holds,
so 500 bytes of nested aliases stand for billions of values once anything walks
them as a tree (`json.dumps`, a copy, a check). Here the parser's events are
counted first, each alias adding what its anchor expands to, and the document
is refused at the first event past a bound, before any value is built. JSON
has no aliases, but its nesting overflows the parser's stack (RecursionError).

The bounds are far above any job or study (a CustomJob is a few KiB, 10 levels
deep); they exist so that no document costs more than a second and a few MB.
"""

from __future__ import annotations

import json
import os
import stat

from vtrain.document_strings import string_problem, string_refused
from vtrain.errors import ConfigError

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES = 1 << 20
MAX_NODES = 50_000
"""Values in the document once every alias is expanded: scalars, lists and mappings."""
MAX_ALIASES = 1_000
MAX_DEPTH = 64
_PURE_CHARS = 32 << 10
BOUNDS = (
    f"at most {MAX_BYTES >> 20} MiB, {MAX_NODES} values (aliases expanded), "
    f"{MAX_ALIASES} aliases and {MAX_DEPTH} levels of nesting"
)


class _Refused(Exception):
    """A bound passed while the events are counted; turned into a ConfigError by the caller."""

    def __init__(self, problem: str, line: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


def refused(problem: str, source: str, line: int | None = None) -> ConfigError:
    """The one-line refusal of a document past a bound."""
    where = f" (line {line})" if line is not None else ""
    aliased = "alias" in problem or "expands" in problem
    return ConfigError(
        f"{problem}{where}",
        source=source,
        expected=f"a document vtrain can read: {BOUNDS}",
        hint="an alias (*name) stands for everything its anchor (&name) holds" if aliased else None,
    )


def read_text(path: str, what: str) -> str:
    """The UTF-8 text of the regular file at `path`, refused past MAX_BYTES; `what` names it in
    errors."""
    try:
        # A FIFO with no writer, a terminal or a tape would block the open or the read
        # forever, and /dev/zero never ends: only a regular file is a document. Stat first, so
        # that a device is never opened; the open cannot block either way (O_NONBLOCK), and
        # fstat refuses what was swapped in between.
        _regular(os.stat(path).st_mode, path, what)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb") as f:
            _regular(os.fstat(fd).st_mode, path, what)
            data = f.read(MAX_BYTES + 1)
    except ConfigError:
        raise
    except (OSError, ValueError) as e:
        # ValueError: a path no file can have (a NUL, a surrogate the file system cannot encode).
        why = e.strerror if isinstance(e, OSError) else "not a path this system can open"
        raise ConfigError(f"cannot read {what}: {why}", source=path) from None
    if len(data) > MAX_BYTES:
        raise ConfigError(
            f"{what} is too large",
            source=path,
            value=f"more than {MAX_BYTES} bytes",
            expected=f"a document vtrain can read: {BOUNDS}",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(
            f"not UTF-8 text: byte {data[e.start]:#04x} on line {line}",
            source=path,
            expected="a UTF-8 file",
            hint="save it as UTF-8 (an editor's Latin-1 or Windows-1252 writes é as one byte)",
        ) from None


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str | None:
    """What a file of `mode` (st_mode) is, in words, when it is not a regular file; else None."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _regular(mode: int, path: str, what: str) -> None:
    kind = file_kind(mode)
    if kind is not None:
        raise ConfigError(
            f"{what} is {kind}", source=path, expected="a regular file (a .yaml or .json document)"
        )


def parse_json(text: str, source: str) -> Any:
    """A JSON document, within the bounds."""
    _check_size(text, source)
    try:
        document = json.loads(text)
    except RecursionError:
        raise refused(f"nested more than {MAX_DEPTH} levels deep", source) from None
    except ValueError as e:
        # ValueError includes int()'s refusal of a number over 4300 digits.
        raise ConfigError(f"not valid JSON: {e}", source=source) from None
    check_tree(document, source)
    return document


def parse_yaml(text: str, source: str, yaml: Any) -> Any:
    """A YAML document read with `yaml` (PyYAML, which the caller imports), within the bounds."""
    from vtrain.yaml_errors import yaml_problem

    _check_size(text, source)
    try:
        loader = _safe_loader(yaml, len(text))
        _measure(text, yaml, loader)
        document = yaml.load(text, Loader=loader)  # noqa: S506 (a safe loader)
    except _Refused as e:
        raise refused(e.problem, source, e.line) from None
    except (yaml.YAMLError, ValueError, RecursionError) as e:
        # ValueError: pyyaml converts numbers with int(), which refuses over 4300 digits.
        raise ConfigError(f"not valid YAML: {yaml_problem(e, text)}", source=source) from None
    check_tree(document, source)
    return document


def _check_size(text: str, source: str) -> None:
    if len(text) > MAX_BYTES:
        raise ConfigError(
            "too large",
            source=source,
            value=f"{len(text)} characters",
            expected=f"a document vtrain can read: {BOUNDS}",
        )


def check_tree(document: Any, source: str) -> None:
    """Refuse a parsed document past the bounds, or holding a string no process or API can take
    (`vtrain.document_strings`).

    Walked without recursion: a document deeper than the interpreter's stack is refused
    here too, as is a list that holds itself.
    """
    # (value, depth, path): the path is (parent's path, key), built into text only for an error.
    stack: list[tuple[Any, int, Any]] = [(document, 1, None)]
    nodes = 0
    while stack:
        value, depth, path = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise refused(f"expands to more than {MAX_NODES} values", source)
        if depth > MAX_DEPTH:
            raise refused(f"nested more than {MAX_DEPTH} levels deep", source)
        if isinstance(value, str):
            _check_string(value, source, path)
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str):
                    _check_string(key, source, (path, key))
                stack.append((item, depth + 1, (path, key)))
        elif isinstance(value, list):
            stack.extend((item, depth + 1, (path, i)) for i, item in enumerate(value))


def _check_string(text: str, source: str, path: Any) -> None:
    problem = string_problem(text)
    if problem is not None:
        raise string_refused(problem, source, _dotted(path))


def _dotted(path: Any) -> str:
    """`spec.pools[0].env` from the walk's (parent, key) chain."""
    keys: list[Any] = []
    while path is not None:
        path, key = path
        keys.append(key)
    text = ""
    for key in reversed(keys):
        text += f"[{key}]" if isinstance(key, int) else f".{key}" if text else str(key)
    return text or "(document)"


def _measure(text: str, yaml: Any, loader: Any) -> None:
    """Walk the document's parser events once, refusing it at the first bound it passes.

    An alias adds what its anchor expands to, so the count is that of the document as a
    tree, found without building it. The parser's events are cheap (libyaml makes them);
    building the values is what costs, and it happens only after this pass.
    """
    events = yaml.events
    # Each open list or mapping: [values, levels, anchor]; the bottom one is the stream.
    stack: list[list[Any]] = [[0, 0, None]]
    anchors: dict[str, tuple[int, int] | None] = {}  # None: its anchor is still open
    composed = aliases = 0

    def add(values: int, levels: int, line: int) -> None:
        top = stack[-1]
        top[0] += values
        top[1] = max(top[1], levels + 1)
        if top[0] > MAX_NODES:
            raise _Refused(f"expands to more than {MAX_NODES} values", line)
        if len(stack) - 1 + levels > MAX_DEPTH:
            raise _Refused(f"nested more than {MAX_DEPTH} levels deep", line)

    for event in yaml.parse(text, Loader=loader):
        line = event.start_mark.line + 1
        if isinstance(event, events.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise _Refused(f"more than {MAX_ALIASES} aliases", line)
            if event.anchor not in anchors:
                continue  # an undefined alias: the loader says so, where it is
            size = anchors[event.anchor]
            if size is None:
                raise _Refused(f"the alias *{event.anchor} is inside its own anchor", line)
            add(*size, line)
        elif isinstance(event, events.ScalarEvent | events.CollectionStartEvent):
            # Counted on the way in as well: a flat list of a million values is refused at
            # the first value past the bound, not once it is whole.
            composed += 1
            if composed > MAX_NODES:
                raise _Refused(f"expands to more than {MAX_NODES} values", line)
            if isinstance(event, events.ScalarEvent):
                if event.anchor is not None:
                    anchors[event.anchor] = (1, 1)
                add(1, 1, line)
            else:
                if len(stack) > MAX_DEPTH:
                    raise _Refused(f"nested more than {MAX_DEPTH} levels deep", line)
                if event.anchor is not None:
                    anchors[event.anchor] = None
                stack.append([1, 1, event.anchor])
        elif isinstance(event, events.CollectionEndEvent):
            values, levels, anchor = stack.pop()
            if anchor is not None:
                anchors[anchor] = (values, levels)
            add(values, levels, line)


def _safe_loader(yaml: Any, size: int) -> Any:
    """PyYAML's own safe loader; above _PURE_CHARS libyaml's where PyYAML has it."""
    # libyaml is ten times faster, but words its syntax errors less plainly ("did not find
    # expected ',' or ']'"); a document of a few KiB, as nearly all are, reads in milliseconds.
    fast = getattr(yaml, "CSafeLoader", None) if size > _PURE_CHARS else None
    return fast or yaml.SafeLoader
