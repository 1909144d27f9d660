"""Numbers given to `vtrain local run`: in range and in ASCII, or one line that names the flag.

Timeouts, grace periods and kill times end up in poll(), which takes at most a
C int of milliseconds; counts and indexes come as text that int() refuses past
4300 digits; float() and int() take digits that are not ASCII, and 'inf'.
"""

from __future__ import annotations

import re
import sys

import pytest
from cli_runner import run_main
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.errors import UsageError, VtrainError
from vtrain.local import Kill, Plan
from vtrain.local.plan import MAX_SECONDS

PY = [sys.executable, "-c", "pass"]
seconds = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=MAX_SECONDS - 10, max_value=MAX_SECONDS * 10),
    st.integers(-5, 3 * 10**6),
)
non_ascii_digits = st.text(
    st.characters(categories=["Nd", "No"]).filter(lambda c: not "0" <= c <= "9"),
    min_size=1,
    max_size=3,
)
texts = st.one_of(
    st.builds(lambda z, n: "0" * z + "9" * n, st.integers(0, 3000), st.integers(1, 6000)),
    non_ascii_digits,
    st.sampled_from(["inf", "-inf", "nan", "1e400", "2147484", "2147483", "1_0", "0x1", " 3 "]),
    seconds.map(str),
    st.text(max_size=6),
)


@examples(200)
@given(timeout=st.none() | seconds, grace=seconds)
def test_waits_that_poll_cannot_take_are_refused(timeout: float | None, grace: float) -> None:
    try:
        plan = Plan.from_options(PY, timeout=timeout, grace=grace)
    except VtrainError as e:
        assert re.search(r"--(timeout|grace): ", str(e))
        return
    assert plan.timeout is None or 0 < plan.timeout <= MAX_SECONDS
    assert 0 <= plan.grace <= MAX_SECONDS


@examples(200)
@given(
    index=texts,
    when=texts,
    role=st.sampled_from(["worker", "chief", "ps"]),
    sig=st.sampled_from(["", ":TERM", ":KILL", ":٩"]),
)
def test_kills_are_in_range_or_refused(index: str, when: str, role: str, sig: str) -> None:
    text = f"{role}:{index}@{when}{sig}"
    try:
        kill = Kill.parse(text)
    except UsageError as e:
        assert str(e).startswith("--kill: ")
        return
    assert re.fullmatch(r"[0-9]+", index) and kill.index == int(index)
    assert 0 <= kill.seconds <= MAX_SECONDS


@examples(200)
@given(
    count=st.integers(0, 50) | st.integers(10**7, 10**30),
    flag=st.sampled_from(["workers", "ps", "evaluators"]),
)
def test_more_replicas_than_descriptors_are_refused_up_front(count: int, flag: str) -> None:
    try:
        plan = Plan.from_options(PY, **{flag: count})
    except UsageError as e:
        assert "too many replicas to rehearse on this machine" in str(e)
        assert count > 100
        return
    assert len(plan.replicas()) == count + 1


@examples(200)
@given(
    flag=st.sampled_from(
        ["--timeout", "--grace", "--workers", "--ps", "--evaluators", "--max-restarts", "--kill"]
    ),
    text=texts,
)
def test_the_cli_answers_any_number_with_one_line(flag: str, text: str) -> None:
    # The command does not exist, so nothing ever starts: only the answer is looked at.
    argv = ["local", "run", flag, text, "--", "/nonexistent/vtrain-test-program"]
    status, err = run_main(argv)
    assert status == 2
    # One line, or one per problem when several are reported together.
    first, *more = err.splitlines()
    assert first.startswith("vtrain local") and "Traceback" not in err, err
    assert not more or (first.endswith("problems:") and all(m.startswith("  ") for m in more))
    assert all(line.isprintable() for line in (first, *more))


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--timeout", "2147484"], r"--timeout: is longer than a wait can be"),
        (["--grace", "inf"], r"argument --grace: not a number of seconds \(got 'inf'\)"),
        (["--timeout", "nan"], r"argument --timeout: not a number of seconds \(got 'nan'\)"),
        (["--kill", "worker:0@" + "9" * 400], r"--kill: the time is longer than a wait can be"),
        (["--kill", "worker:" + "9" * 5000 + "@1"], r"--kill: the index is too large"),
        (["--workers", "9" * 5000], r"argument --workers: not an integer \(got '9999"),
        (["--workers", "١"], r"argument --workers: not an integer \(got '١'\)"),
    ],
)
def test_each_number_error_names_the_flag(args: list[str], match: str) -> None:
    status, err = run_main(["local", "run", *args, "--", *PY])
    assert status == 2 and re.search(match, err), err
    assert "Traceback" not in err
