"""vtrain's one voice: every line vtrain says is a record of the `vtrain` logger or a child.

A module asks `logger(__name__)`: `vtrain.checkpoints.manager` is itself, a plugin's
`vtrain_pytorch.state` becomes `vtrain.pytorch.state`, so one name (`vtrain`) silences,
raises or redirects all of vtrain with the standard `logging` configuration.

Until the program configures logging itself, the `vtrain` logger shows its records at
INFO and above on stderr, as they are written (the lines vtrain printed before it
spoke through `logging`). Once the program gives the root logger a handler of its own
(`logging.basicConfig(format=...)`, `dictConfig`), the records go there instead, as
propagated records would; a handler the program adds to the `vtrain` logger itself
takes them alone. `logging.getLogger("vtrain").setLevel(logging.WARNING)` quiets vtrain's
notes.

Why not plain propagation: a library that calls `logging.info(...)` before anything is
configured makes Python configure the root itself (`basicConfig()`, `BASIC_FORMAT` on
stderr), and TensorFlow's strategies do. That is nobody's choice, and under it every
vtrain line would read `INFO:vtrain.plugins.handle:vtrain: resumed …`; such a handler is
not counted as the program's.
"""

from __future__ import annotations

import logging
import sys

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

ROOT = "vtrain"
_PLUGIN_PREFIX = "vtrain_"


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The record's message on stderr, which is looked up at each record (a test's capture, a
    replaced sys.stderr), flushed."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass  # StreamHandler.__init__ sets it; stderr is read at each record instead


class _DefaultHandler(StderrHandler):
    """vtrain's records: to the program's handlers where it has configured logging, else on
    stderr as plain lines; nowhere while a command's console or the program's own handler on
    the `vtrain` logger takes them."""

    def handle(self, record: logging.LogRecord) -> bool:
        top = logging.getLogger(ROOT)
        if _consoles or any(h is not self for h in top.handlers) or top.propagate:
            return False  # the console, the program's handler, or propagation delivers it
        if configured():
            logging.getLogger().callHandlers(record)  # as propagation to the root would
            return True
        return bool(super().handle(record))


_consoles: list[logging.Handler] = []
"""The console handlers installed now (`console`): while one is, the default steps aside."""


def _is_implicit(handler: logging.Handler) -> bool:
    """True for the handler Python's own `basicConfig()` makes unasked: stderr, BASIC_FORMAT."""
    formatter = handler.formatter
    return (
        type(handler) is logging.StreamHandler
        and getattr(handler, "stream", None) in (sys.stderr, sys.__stderr__)
        and formatter is not None
        and formatter._fmt == logging.BASIC_FORMAT
    )


def configured() -> bool:
    """True when the program has given the root logger a handler of its own."""
    return any(not _is_implicit(h) for h in logging.getLogger().handlers)


def _root() -> logging.Logger:
    top = logging.getLogger(ROOT)
    if not any(isinstance(h, _DefaultHandler) for h in top.handlers):
        top.addHandler(_DefaultHandler())
        top.propagate = False  # the default handler forwards to the root's, where it should
        if top.level == logging.NOTSET:
            top.setLevel(logging.INFO)
    return top


def logger(name: str = ROOT) -> logging.Logger:
    """The logger of module `name`, a child of `vtrain` (a plugin's modules included)."""
    _root()
    if name.startswith(_PLUGIN_PREFIX):
        name = ROOT + "." + name[len(_PLUGIN_PREFIX) :]
    elif name != ROOT and not name.startswith(ROOT + "."):
        name = f"{ROOT}.{name}"
    return logging.getLogger(name)


class console:  # noqa: N801 - used as a function: `with console():`
    """While a command runs, vtrain's records go to its console (stderr) and nowhere else.

    The command line is the program: it decides how vtrain's lines look, whatever handlers
    the root logger has (a test runner's capture, say). Installed once per command; nested,
    the outer one stays.
    """

    def __init__(self) -> None:
        self._handler: logging.Handler | None = None
        self._propagate = False

    def __enter__(self) -> None:
        top = _root()
        self._handler = StderrHandler()
        top.addHandler(self._handler)
        _consoles.append(self._handler)
        self._propagate, top.propagate = top.propagate, False

    def __exit__(self, *exc: object) -> None:
        top = logging.getLogger(ROOT)
        if self._handler is not None:
            top.removeHandler(self._handler)
            _consoles.remove(self._handler)
        top.propagate = self._propagate
