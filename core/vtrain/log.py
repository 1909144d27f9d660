"""vtrain's one voice: every line vtrain says is a record of the `vtrain` logger or a child.

A module asks `logger(__name__)`: `vtrain.checkpoints.manager` is itself, a plugin's
`vtrain_pytorch.state` becomes `vtrain.pytorch.state`, so one name (`vtrain`) silences,
raises or redirects all of vtrain with the standard `logging` configuration.

Until the program configures logging itself, the `vtrain` logger shows its records at
INFO and above on stderr, as they are written (the lines vtrain printed before it
spoke through `logging`). Once the root logger has a handler (`logging.basicConfig`,
`dictConfig`), that default steps aside and the records reach the program's handlers
instead; `logging.getLogger("vtrain").setLevel(logging.WARNING)` quiets vtrain's notes,
`.propagate = False` with a handler of one's own redirects them.
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
    """vtrain's lines on stderr while the program has not configured logging itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        # The program's own handlers on the root: it has chosen where lines go.
        return default_handler_active() and bool(super().filter(record))


_consoles: list[logging.Handler] = []
"""The console handlers installed now (`console`): while one is, the default steps aside."""


def _root() -> logging.Logger:
    top = logging.getLogger(ROOT)
    if not any(isinstance(h, _DefaultHandler) for h in top.handlers):
        top.addHandler(_DefaultHandler())
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


def default_handler_active() -> bool:
    """True while vtrain's own stderr handler shows its records: logging not configured by
    the program, and no command line's console installed."""
    return not _consoles and not logging.getLogger().handlers


class console:  # noqa: N801 - used as a function: `with console():`
    """While a command runs, vtrain's records go to its console (stderr) and nowhere else.

    The command line is the program: it decides how vtrain's lines look, whatever handlers
    the root logger has (a test runner's capture, say). Installed once per command; nested,
    the outer one stays.
    """

    def __init__(self) -> None:
        self._handler: logging.Handler | None = None
        self._propagate = True

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
