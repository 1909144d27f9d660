"""A process's title (`vtrain.local.title`): what /proc shows for it, in a real fork of this one.

Its command line becomes the title, cut to the space the original argv had, the
rest zeroed; its name (comm) the first 15 bytes of the name; its environment,
which lies right after argv in memory, stays as it was.
"""

from __future__ import annotations

import marshal
import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vtrain.local.title import set_title

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="/proc/PID/cmdline is Linux's")


def _read(name: str) -> bytes:
    with open(f"/proc/self/{name}", "rb") as f:
        return f.read()


def _in_a_fork(title: str, name: str) -> dict[str, bytes | bool]:
    """Set the title in a fork of this process; what /proc showed there before and after."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            before = {"cmdline": _read("cmdline"), "environ": _read("environ")}
            changed = set_title(title, name)
            after = {k: _read(k) for k in ("cmdline", "environ", "comm")}
            os.write(
                write_end,
                marshal.dumps(
                    {**{f"{k}0": v for k, v in before.items()}, **after, "changed": changed}
                ),
            )
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        seen = marshal.loads(f.read())
    os.waitpid(pid, 0)
    return seen


@settings(max_examples=60, deadline=None)
@given(
    title=st.text(max_size=300),
    name=st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",))),
)
def test_the_title_is_the_command_line_and_the_name_is_comm(title: str, name: str) -> None:
    seen = _in_a_fork(title, name)
    size = len(seen["cmdline0"])
    assert seen["changed"] is True
    expected = title.encode(errors="replace")[: size - 1]
    assert seen["cmdline"] == expected.ljust(size, b"\0")
    assert seen["environ"] == seen["environ0"]
    assert seen["comm"] == name.encode()[:15] + b"\n"


def test_pgrep_f_no_longer_finds_the_old_command_line() -> None:
    seen = _in_a_fork("vtrain keeper of job", "vtrain keeper")
    assert b"pytest" in seen["cmdline0"]
    assert seen["cmdline"].rstrip(b"\0") == b"vtrain keeper of job"
