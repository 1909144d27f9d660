"""Run the `vtrain` console script in this process, for tests that try many command lines."""

from __future__ import annotations

import contextlib
import io

from vtrain.cli import main


def run_main(argv: list[str]) -> tuple[int, str]:
    """(exit status, stderr) of `vtrain ARGV`; stdout is dropped, argparse's exits caught."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as e:  # argparse
            status = e.code if isinstance(e.code, int) else 1
    return status, err.getvalue()
