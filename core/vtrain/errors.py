"""Every error vtrain raises. One module, a small tree, messages that say what to fix.

A message names where the bad value came from (an environment variable, a
command-line argument, a file), the JSON path inside it, the value itself,
what was expected, and a hint. `VtrainError` subclasses `ValueError` so that
callers that already catch bad input keep working.
"""

from __future__ import annotations

from collections.abc import Iterable

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MAX_VALUE_CHARS = 120


def _show(value: Any) -> str:
    """A short, quoted rendering of a bad value (long values are cut, not dumped)."""
    text = repr(value)
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


class VtrainError(ValueError):
    """Base of every vtrain error."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        path: str | None = None,
        value: Any = ...,
        expected: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.source = source
        self.path = path
        self.value = value
        self.expected = expected
        self.hint = hint
        self.problem = message
        super().__init__(self._render())

    def _render(self) -> str:
        where = ": ".join(p for p in (self.source, self.path) if p)
        text = f"{where}: {self.problem}" if where else self.problem
        if self.value is not ...:
            text += f" (got {_show(self.value)})"
        if self.expected:
            text += f"; expected {self.expected}"
        if self.hint:
            text += f". Hint: {self.hint}"
        return text


class ConfigError(VtrainError):
    """A malformed environment variable, JSON document or setting."""


class ConflictError(ConfigError):
    """Two sources describe this replica differently."""


class UsageError(VtrainError):
    """A bad command-line argument or function argument."""


class PluginError(VtrainError):
    """A plugin that is unknown, disabled, broken, or whose framework is missing."""


class MissingExtraError(PluginError, ImportError):
    """An optional dependency is not installed; the message says what to install."""

    def __init__(
        self, what: str, extra: str | None, *, module: str | None = None, install: str = ""
    ) -> None:
        # A vtrain extra when there is one; else the plugin's own instruction; else the module.
        hint = f'pip install "vtrain[{extra}]"' if extra else install or f"pip install {module}"
        super().__init__(
            f"{what} needs {module or extra!r}, which is not installed",
            hint=hint,
        )
        # ImportError.__init__ is not reached through ValueError; set what it would, and
        # `msg`, which ImportError.__str__ prints.
        self.name = module
        self.msg = str(self.args[0])


class StorageError(VtrainError):
    """A location that cannot be read or written."""


class CheckpointError(StorageError):
    """A checkpoint that is missing, uncommitted or fails its manifest."""


class LaunchError(VtrainError):
    """A local cluster that could not be started or did not finish."""


class ErrorList(ConfigError):
    """Several problems found in one pass, reported together."""

    def __init__(self, errors: Iterable[VtrainError]) -> None:
        self.errors = tuple(errors)
        lines = "\n  ".join(str(e) for e in self.errors)
        super().__init__(f"{len(self.errors)} problems:\n  {lines}")


def raise_all(errors: list[VtrainError]) -> None:
    """Raise nothing, the one error, or all of them together."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ErrorList(errors)
