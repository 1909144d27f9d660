"""The line a replica prints once its SIGTERM save is committed, and the step read back from it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vtrain.preemption import committed_line, committed_step

# Any text a replica might print around it, on lines of their own.
OTHER = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=40
)  # printable text: a lone surrogate cannot be printed (encoded) at all


@given(st.integers(0, 10**12), OTHER, st.lists(OTHER, max_size=5))
def test_the_step_comes_back_from_the_line_among_others(
    step: int, detail: str, noise: list[str]
) -> None:
    lines = [*noise, committed_line(step, detail), *noise]
    assert committed_step(line.encode() for line in lines) == step


def test_the_last_commit_counts_and_a_bare_mention_does_not() -> None:
    lines = [committed_line(3).encode(), b"[w] " + committed_line(8, "(epoch 2) to /c").encode()]
    assert committed_step(lines) == 8
    assert committed_step([b"vtrain: preempted (SIGTERM): committed step x", b""]) is None
    assert committed_line(5) == "vtrain: preempted (SIGTERM): committed step 5"
