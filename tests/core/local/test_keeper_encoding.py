"""A start no process can be given fails that replica's start, not the keeper (issue 42).

Documents are checked before a rehearsal starts anything, but the keeper is the
last line: an argument or a variable with a lone surrogate (or a NUL) reaching
posix_spawn raised UnicodeEncodeError (ValueError) out of the keeper's loop,
which ended it, and every replica with it. Here it answers a LaunchError for
that start, and a real replica started afterwards runs and exits as usual.
"""

from __future__ import annotations

import os
import sys

import pytest

from vtrain.errors import LaunchError
from vtrain.local.keeper import Keeper
from vtrain.local.process import ReplicaProcess

OK = [sys.executable, "-c", "print('ran')"]


@pytest.mark.parametrize(
    ("command", "env"),
    [
        (OK, {"X": "\udcff\ud800"}),  # the report's env value
        ([sys.executable, "-c", "pass", "\ud800"], {}),  # in an argument
        (OK, {"X\ud800": "1"}),  # in a variable's name
        (OK, {"X": "a\0b"}),  # a NUL
    ],
)
def test_a_start_that_cannot_be_encoded_fails_alone(
    command: list[str], env: dict[str, str]
) -> None:
    keeper = Keeper.start(job="encoding")
    try:
        bad, good = ReplicaProcess.start(
            keeper, [("chief-0", command, env, None), ("worker-0", OK, dict(os.environ), None)]
        )
        assert isinstance(bad, LaunchError)
        assert str(bad).startswith(
            "COMMAND: could not start chief-0: Invalid or incomplete multibyte or wide character"
        ), str(bad)
        assert "an argument or a variable holds a NUL or a lone surrogate" in str(bad)
        # The keeper lives on: the other replica ran, and its exit is reported.
        assert isinstance(good, ReplicaProcess)
        exits: list[tuple[int, int]] = []
        while not exits:
            keeper.receive()
            exits = keeper.exits()
        assert exits == [(good.pid, 0)]
        with os.fdopen(good.output, "rb") as output:
            assert output.read() == b"ran\n"
    finally:
        keeper.close()
