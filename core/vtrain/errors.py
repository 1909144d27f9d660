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
    """A short, quoted rendering of a bad value, credentials hidden (long values are cut)."""
    from vtrain.redact import redact, redact_text

    # Hidden before the cut: a cut could keep a secret's head and lose the name that says so.
    # The structure first (a list's "--password", "pw"), then the text (bytes, odd objects).
    try:
        text = redact_text(repr(redact(value)))
    except ValueError:  # repr() of an int beyond Python's 4300-digit limit
        if not isinstance(value, int):
            raise
        text = f"<an int of {value.bit_length()} bits>"
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


class VtrainError(ValueError):
    """Base of every vtrain error: one line that says what is wrong, where and what to do.

    `message` is the problem (kept as `problem`). `source` names where the value came
    from (an environment variable, an argument, a file) and `path` the place inside it
    (a JSON path); `value` is the bad value itself, quoted with credentials hidden and
    long ones cut; `expected` says what would have been right, and `hint` what to do.
    Each is kept as an attribute of that name, and the message reads
    ``source: path: problem (got value); expected ... . Hint: ...``.
    """

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
        from vtrain.printable import printable
        from vtrain.redact import redact_text

        # Where and what-was-expected may quote what was read (a URI with a newline or an
        # ANSI escape): escaped, so the error stays one line. Not the problem, which an
        # ErrorList builds from several lines on purpose.
        where = ": ".join(printable(p) for p in (self.source, self.path) if p)
        # The problem may quote what it read (a host, a name=value); expected and hint are ours.
        problem = redact_text(self.problem)
        text = f"{where}: {problem}" if where else problem
        if self.value is not ...:
            text += f" (got {_show(self.value)})"
        if self.expected:
            text += f"; expected {printable(self.expected)}"
        if self.hint:
            text += f". Hint: {printable(self.hint)}"
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
    """An optional dependency is not installed; the message says what to install.

    `what` needs the `module` (the top-level module that failed to import), which the
    vtrain `extra` installs; the hint is the command that installs it in this
    environment, else `install` (a plugin shipped elsewhere says what installs its
    framework), else ``pip install <module>``. An `ImportError` too, with `name` the
    module.
    """

    def __init__(
        self, what: str, extra: str | None, *, module: str | None = None, install: str = ""
    ) -> None:
        from vtrain.install_hints import Installation, install_command

        # What vtrain declares for the module (or the extra), in the form that fits how vtrain
        # is installed; else the instruction of a plugin shipped elsewhere; else the module.
        ours = install_command(extra, module, Installation.here()) if extra or not install else None
        hint = ours or install or f"pip install {module or extra}"
        super().__init__(
            # Worded so that any `what` reads right: "YAML job files needs" did not.
            f"{module or extra!r}, needed for {what}, is not installed",
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


def shown(error: VtrainError) -> str:
    """An error as a person reads it: a line per problem, control characters escaped."""
    from vtrain.printable import printable

    if isinstance(error, ErrorList):
        return f"{len(error.errors)} problems:" + "".join(f"\n  {shown(e)}" for e in error.errors)
    return printable(str(error))


def raise_all(errors: list[VtrainError]) -> None:
    """Raise nothing, the one error, or all of them together."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ErrorList(errors)


class Problems:
    """Every problem found in one pass over a document or a command line, raised together.

    `bad` records one problem (an error of `kind`, UsageError unless told), `add` the
    errors a reader raised, and `raise_all` raises nothing, the one problem, or an
    ErrorList of all of them: every "all problems at once" refusal has this one shape.
    With `dedupe`, a problem already recorded (the same message) is recorded once.
    """

    def __init__(
        self,
        source: str | None = None,
        *,
        kind: type[VtrainError] | None = None,
        dedupe: bool = False,
    ) -> None:
        self.source = source
        """The default source of `bad`'s problems (a variable, a file, a flag)."""
        self.kind: type[VtrainError] = UsageError if kind is None else kind
        self.errors: list[VtrainError] = []
        self._dedupe = dedupe

    def bad(
        self,
        where: str | None,
        problem: str,
        value: Any = ...,
        expected: str | None = None,
        hint: str | None = None,
        *,
        source: str | None = None,
        kind: type[VtrainError] | None = None,
    ) -> None:
        """One problem at `where`: the path inside `source` when one is set, else the source."""
        origin = self.source if source is None else source
        path = where if origin is not None else None
        origin = origin if origin is not None else where
        made = (kind or self.kind)(
            problem, source=origin, path=path, value=value, expected=expected, hint=hint
        )
        self.add(made)

    def add(self, *errors: VtrainError) -> None:
        """Problems found by a reader that raises (a nested document, a flag's value)."""
        for error in errors:
            if self._dedupe and any(str(e) == str(error) for e in self.errors):
                continue
            self.errors.append(error)

    def __bool__(self) -> bool:
        return bool(self.errors)

    def __len__(self) -> int:
        return len(self.errors)

    def raise_all(self) -> None:
        """Raise nothing, the one problem, or all of them together."""
        raise_all(self.errors)


def positive_seconds(
    value: object, source: str, problem: str, expected: str = "seconds > 0"
) -> float:
    """`value` as seconds when it is a number > 0 (not a bool, not NaN); else a UsageError
    saying `problem` about the argument `source`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise UsageError(problem, source=source, value=value, expected=expected)
    return float(value)
