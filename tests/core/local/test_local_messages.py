"""vtrain's own lines close every bracket they open, as shown: after their redaction, too.

A note is redacted as it is written and again as it is shown, and a hidden value
runs to the next blank: an excerpt of a script's output that ends in a secret
(`--token abc`) once ate the `);` that followed it.
"""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_restart_policy import ROWS

from vtrain.local.restart_policy import Decision, Exit, Rules, decide
from vtrain.redact import redact_text

RULES = Rules(max_restarts=5)


def _shown(text: str) -> str:
    """`text` as the console shows a note: redacted by the notes, then by the output."""
    return redact_text(redact_text(text))


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def _messages(decision: Decision) -> list[str]:
    return [text for text, _ in decision.notes] + ([decision.reason] if decision.reason else [])


@pytest.mark.parametrize(("exit", "rules", "expected"), ROWS)
def test_every_decision_s_lines_close_their_brackets(
    exit: Exit, rules: Rules, expected: Decision
) -> None:
    for text in _messages(decide(exit, rules)):
        assert _balanced(_shown(text)), text


def _refusal(argv: list[str]) -> tuple[int, list[bytes]]:
    parser = argparse.ArgumentParser(prog="strict.py")
    parser.add_argument("--epochs")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        try:
            parser.parse_args(argv)
        except SystemExit as e:
            return int(e.code or 0), [line.encode() for line in err.getvalue().splitlines()]
    return 0, []


_SECRET_FLAG = st.sampled_from(["--password", "--token", "--api-key", "--db-pass", "--epochs"])
# Values with no brackets of their own: every bracket in the line is vtrain's.
_VALUE = st.from_regex(r"[A-Za-z0-9_.;:=/@-]{1,12}", fullmatch=True)


@given(
    args=st.lists(
        st.one_of(
            st.tuples(_SECRET_FLAG, _VALUE).map(lambda p: [p[0], p[1]]),
            st.tuples(_SECRET_FLAG, _VALUE).map(lambda p: [f"{p[0]}={p[1]}"]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_refusal_that_quotes_secret_arguments_is_shown_whole(args: list[list[str]]) -> None:
    argv = [word for pair in args for word in pair]
    code, tail = _refusal(argv)
    if code != 2:
        return
    decision = decide(Exit("worker-0", code, age=60.0, tail=tail), RULES)
    note, reason = decision.notes[0][0], decision.reason
    for text in (note, reason):
        shown = _shown(text)
        assert _balanced(shown), shown
        assert shown.startswith("worker-0's script refused its arguments"), shown
    assert "not restarting it, as a restart passes the same arguments: strict.py: error:" in (
        _shown(note)
    )
