"""The `vtrain` command: one sub-command per module in this package.

Each sub-command module has `add_parser(subparsers)`, which registers its
parser and sets `run` (a function of the parsed arguments returning an exit
status) as the parser's default. Sub-command modules are imported only when
the command line names them, so `vtrain info` never pays for the launcher.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from vtrain.errors import VtrainError, shown

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

# name -> (module, one-line help). Adding a sub-command is one line here.
COMMANDS = {
    "info": ("vtrain.cli.info", "show what this replica is: platform, role, rank, cluster, dirs"),
    "local": ("vtrain.cli.local", "rehearse a multi-replica job on this machine"),
    "tune": ("vtrain.cli.tune", "run a hyperparameter-tuning study locally"),
    "render": ("vtrain.cli.render", "print a job for Vertex AI, AI Platform or Kubeflow"),
    "submit": ("vtrain.cli.submit", "send a job to Vertex AI or Kubeflow (AI Platform: render)"),
    "report": ("vtrain.cli.report", "draw a job's or a study's folder as one HTML page"),
}

EXIT_BAD_INPUT = 2
DESCRIPTION = (
    "Run one training script unchanged on Vertex AI, AI Platform, Kubeflow or torchrun: "
    "see what a replica is (info), rehearse a multi-replica job on this machine (local), "
    "run a tuning study (tune), print or send the job (render, submit), and draw what a job "
    "or a study did (report)."
)


def version() -> str:
    """vtrain's version, from the installed package's metadata."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("vtrain")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "unknown (not installed)"


class _Version(argparse.Action):
    # argparse's own "version" action needs the text up front: reading the metadata
    # at every start would cost each command for the one that asks.
    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        from vtrain.cli.output import say

        say(f"vtrain {version()}")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    # A bad flag is reported on one line, as every other error; `--help` shows the usage.
    # Sub-command parsers are made with the parent's class, so this covers them all.
    made: list[_Parser] = []  # every parser of this command line, to find the one that was used
    typed: list[str] = []  # the command line's words after `vtrain`

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        _Parser.made.append(self)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse's formatter asks `shutil` for the terminal's width, and every add_argument
        # makes one: importing shutil (bz2, lzma) cost 2 ms of each start, for rarely shown help.
        return self.formatter_class(prog=self.prog, width=_width())  # type: ignore[call-arg]

    def unrecognized(self, extra: Sequence[str]) -> NoReturn:
        """Refuse flags this (sub-)command does not know, naming it and the nearest real flag."""
        import difflib

        known = [s for action in self._actions for s in action.option_strings]
        flags = [e.partition("=")[0] for e in extra if e.startswith("-")]
        close = difflib.get_close_matches(flags[0], known, n=1) if flags else []
        hint = f"; did you mean {close[0]}?" if close else ""
        self.error(f"unrecognized arguments: {' '.join(extra)}{hint}")

    def error(self, message: str) -> NoReturn:
        from vtrain.printable import printable

        message = self._misplaced_flag() or message
        self.exit(
            EXIT_BAD_INPUT, f"{self.prog}: error: {printable(message)} (see {self.prog} --help)\n"
        )

    def _misplaced_flag(self) -> str | None:
        # `vtrain local --workers 2` would say "invalid choice: '2'": the flag is one of
        # `vtrain local run`'s, typed before the sub-command that takes it.
        typed = _Parser.typed
        words = self.prog.split()[1:]
        if typed[: len(words)] != words:
            return None
        rest = typed[len(words) :]
        flags = [a.partition("=")[0] for a in rest if a.startswith("-")]
        for action in self._actions:
            if not isinstance(action, argparse._SubParsersAction):
                continue
            for name, sub in action.choices.items():
                known = {s for a in sub._actions for s in a.option_strings}
                taken = [f for f in flags if f in known and f not in ("-h", "--help")]
                if taken and name not in rest:
                    line = " ".join([*self.prog.split(), name, *rest])
                    return f"{taken[0]} is an option of `{sub.prog}`; did you mean: {line}"
        return None


def _width() -> int:
    """The width help text is wrapped to, as argparse takes it from `shutil.get_terminal_size`:
    COLUMNS, else the terminal's, else 80; less 2."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


def _parser(chosen: str | None) -> argparse.ArgumentParser:
    parser = _Parser(prog="vtrain", description=DESCRIPTION)
    parser.add_argument(
        "--version", action=_Version, nargs=0, help="print vtrain's version and exit"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    if chosen is not None:
        importlib.import_module(COMMANDS[chosen][0]).add_parser(sub)
        return parser
    # `vtrain --help` (or no command, or a wrong one) lists them all; a command line that
    # names one needs only that one's parser (a parser each cost 0.15 ms of every start).
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text)
    return parser


def error_line(command: str, message: str) -> str:
    """`COMMAND: error: MESSAGE`, naming the command once when the message already begins with it.

    An error raised inside `vtrain submit vertex` names its source as that command; shown
    behind `vtrain submit: error:` it would repeat the prefix.
    """
    own, _, rest = message.partition(": ")
    if rest and (own == command or own.startswith(command + " ")):
        return f"{own}: error: {rest}"
    return f"{command}: error: {message}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `vtrain` console script."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    chosen = next((a for a in args_in if not a.startswith("-")), None)
    _Parser.made.clear()
    _Parser.typed = args_in
    parser = _parser(chosen if chosen in COMMANDS else None)
    args, extra = parser.parse_known_args(args_in)
    if extra:
        # argparse would name `vtrain`, not the sub-command the flag was typed for.
        typed = args_in[: args_in.index(extra[0])] if extra[0] in args_in else args_in
        words = [a for a in typed if not a.startswith("-")]
        used = max(
            (p for p in _Parser.made if p.prog.split()[1:] == words[: len(p.prog.split()) - 1]),
            key=lambda p: len(p.prog.split()),
        )
        used.unrecognized(extra)
    from vtrain.cli.output import console

    try:
        with console():
            status: int = args.run(args)
    except VtrainError as e:
        # A person reads this: the message says what to fix; a traceback would only bury it.
        from vtrain.cli.output import complain

        complain(error_line(f"vtrain {args.command}", shown(e)))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
