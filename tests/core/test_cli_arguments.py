"""Command-line numbers and parse errors: ASCII, bounded, finite, and one printable line.

argparse's own `type=int` and `type=float` take '١٢٣', 'inf' and 'nan', raise
past int()'s 4300-digit limit, and its errors print the usage first and any
control character in the argument as it is.
"""

from __future__ import annotations

import argparse
import math
import re

import pytest
from cli_runner import run_main
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.cli.arguments import integer, seconds
from vtrain.cluster.fields import MAX_DIGITS

texts = st.one_of(
    st.builds(lambda z, n: "0" * z + "9" * n, st.integers(0, 3000), st.integers(1, 6000)),
    st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=3),
    st.sampled_from(["inf", "-inf", "nan", "1e400", "1_000", "0x10", " 7 ", "+3", "-2", "1e3"]),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.integers().map(str),
    st.text(max_size=6),
)


@examples(200)
@given(text=texts)
def test_integer_takes_ascii_digits_only(text: str) -> None:
    try:
        value = integer(text)
    except argparse.ArgumentTypeError as e:
        assert str(e).startswith("not an integer")
        return
    match = re.fullmatch(r"\s*[+-]?0*([0-9]+)\s*", text, re.ASCII)
    assert match is not None and len(match[1]) <= MAX_DIGITS
    assert value == int(text)


@examples(200)
@given(text=texts)
def test_seconds_are_finite_ascii_numbers(text: str) -> None:
    try:
        value = seconds(text)
    except argparse.ArgumentTypeError as e:
        assert str(e).startswith("not a number of seconds")
        return
    assert math.isfinite(value) and text.isascii()


@examples(200)
@given(
    flag=st.sampled_from(["--parallel", "--seed", "--workers", "--ps", "--evaluators"]),
    text=texts,
)
def test_tune_answers_any_number_with_one_line(flag: str, text: str) -> None:
    status, err = run_main(["tune", "--study", "/nonexistent/study.json", flag, text, "--", "x"])
    assert status == 2
    assert len(err.splitlines()) == 1 and err.startswith("vtrain tune"), err
    assert err.rstrip("\n").isprintable()


@examples(200)
@given(
    command=st.sampled_from([["info"], ["local", "run"], ["tune"], []]),
    junk=st.lists(st.text(st.characters(exclude_characters="\x00"), min_size=1), min_size=1),
)
def test_a_bad_command_line_is_one_printable_line(command: list[str], junk: list[str]) -> None:
    status, err = run_main([*command, "--no-such-flag", *junk])
    assert status == 2
    assert err.count("\n") == 1 and err.rstrip("\n").isprintable(), err
    assert "--help" in err  # where the usage went


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (
            ["tune", "--study", "s.json", "--parallel", "9" * 5000, "--", "x"],
            r"^vtrain tune: error: argument --parallel: not an integer \(got '9999",
        ),
        (
            ["tune", "--study", "s.json", "--seed", "١", "--", "x"],
            r"^vtrain tune: error: argument --seed: not an integer \(got '١'\)",
        ),
        (["info", "\x1b[31m"], r"^vtrain info: error: unrecognized arguments: \\x1b\[31m "),
    ],
)
def test_each_error_names_the_argument(argv: list[str], match: str) -> None:
    status, err = run_main(argv)
    assert status == 2 and re.search(match, err), err


@examples(200)
@given(
    name=st.text(st.characters(exclude_characters="\x00/"), min_size=1, max_size=12),
    uri=st.sampled_from(["gs://bucket/", "/tmp/", "file:///tmp/"]),
)
def test_a_path_with_a_newline_stays_on_one_line(name: str, uri: str) -> None:
    # The path is named as the error's source, not quoted as its value: it must be escaped too.
    status, err = run_main(["tune", "--study", f"{uri}no-such-dir/{name}", "--", "x"])
    assert status == 2
    assert err.count("\n") == 1 and err.rstrip("\n").isprintable(), err


def test_a_count_typed_as_a_word_says_what_a_count_looks_like() -> None:
    status, err = run_main(["local", "run", "--workers=two", "--", "true"])
    assert status == 2
    assert (
        "argument --workers: not an integer (got 'two'); expected a whole number such as 2" in err
    ), err


@pytest.mark.parametrize(
    ("message", "line"),
    [
        # The source names the sub-command already: said once, not twice.
        (
            "vtrain submit vertex: no Application Default Credentials; hint: run gcloud",
            "vtrain submit vertex: error: no Application Default Credentials; hint: run gcloud",
        ),
        ("vtrain submit: nothing to send", "vtrain submit: error: nothing to send"),
        ("--job: not a file (got 'x')", "vtrain submit: error: --job: not a file (got 'x')"),
        ("vtrain submitter: odd", "vtrain submit: error: vtrain submitter: odd"),
    ],
)
def test_an_error_names_its_command_once(message: str, line: str) -> None:
    from vtrain.cli import error_line

    assert error_line("vtrain submit", message) == line


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["local", "run", "--wrokers", "2", "--", "true"],
            "vtrain local run: error: unrecognized arguments: --wrokers; did you mean --workers?",
        ),
        (
            ["local", "run", "--gracee=1", "--", "true"],
            "vtrain local run: error: unrecognized arguments: --gracee=1; did you mean --grace?",
        ),
        (
            ["info", "--jsn"],
            "vtrain info: error: unrecognized arguments: --jsn; did you mean --json?",
        ),
        (["info", "--zzzzzz"], "vtrain info: error: unrecognized arguments: --zzzzzz (see"),
    ],
)
def test_a_misspelt_flag_is_named_with_its_command_and_the_nearest_real_one(
    argv: list[str], line: str
) -> None:
    status, err = run_main(argv)
    assert status == 2 and err.startswith(line), err


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["local", "--workers", "2"],
            "vtrain local: error: --workers is an option of `vtrain local run`; "
            "did you mean: vtrain local run --workers 2 (see",
        ),
        (
            ["local", "--grace=3", "--", "python", "t.py"],
            "vtrain local: error: --grace is an option of `vtrain local run`; "
            "did you mean: vtrain local run --grace=3 -- python t.py (see",
        ),
        # A sub-command that does not exist is still named as one.
        (["local", "bogus"], "vtrain local: error: argument COMMAND: invalid choice: 'bogus'"),
    ],
)
def test_a_flag_typed_before_its_sub_command_is_shown_where_it_belongs(
    argv: list[str], line: str
) -> None:
    status, err = run_main(argv)
    assert status == 2 and err.startswith(line), err
