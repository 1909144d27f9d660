"""A document's strings reach a process or an API: a NUL or a lone surrogate is refused by path.

Issue 42: an env value "\\udcff\\ud800" in a Kubeflow manifest crashed the keeper
with a UnicodeEncodeError. Here the decision (`string_problem`) has its table;
the property tests put such a string at any place of a JSON or YAML document,
as a value or a key, and the refusal names that place; and a job or study
"file" that is a FIFO, a device or a folder is refused without blocking.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.document_strings import check_flags, string_problem
from vtrain.documents import file_kind, parse_json, parse_yaml, read_text
from vtrain.errors import ConfigError, UsageError


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", None),
        ("plain", None),
        ("é ☃ 😀 \u2028", None),
        ("a\0b", "a NUL character (\\0) in a string"),
        ("\udcff\ud800", "an unpaired surrogate (U+DCFF) at character 1 of a string"),
        ("ab\ud800", "an unpaired surrogate (U+D800) at character 3 of a string"),
        ("x\udfff", "an unpaired surrogate (U+DFFF) at character 2 of a string"),
        # A NUL is said first: both are refused, and one line says one thing.
        ("\ud800\0", "a NUL character (\\0) in a string"),
    ],
)
def test_string_problem(text: str, said: str | None) -> None:
    assert string_problem(text) == said


BAD = st.sampled_from(["\0", "\ud800", "\udcff", "\udfff", "\udbff"])
_GOOD = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=4)
# A string with one bad character at any position.
BAD_TEXT = st.tuples(_GOOD, BAD, _GOOD).map("".join)
LEAF = st.one_of(st.integers(), st.booleans(), st.none(), _GOOD)
DOCUMENTS = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text("abcxyz", min_size=1, max_size=3), inner, max_size=3),
    ),
    max_leaves=12,
)


def _places(value: Any, path: str = "") -> list[tuple[str, Any, Any, bool]]:
    """Every (dotted path, parent, key, is a key) a string can be put at."""
    found: list[tuple[str, Any, Any, bool]] = []
    if isinstance(value, dict):
        for key in list(value):
            inner = f"{path}.{key}" if path else str(key)
            found.append((inner, value, key, False))
            found.append((inner, value, key, True))
            found.extend(_places(value[key], inner))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.append((f"{path}[{i}]", value, i, False))
            found.extend(_places(item, f"{path}[{i}]"))
    return found


@st.composite
def bad_documents(draw: st.DrawFn) -> tuple[Any, str]:
    """A document with one bad string put at one of its places, and that place's path."""
    document = {"root": draw(DOCUMENTS)}
    path, parent, key, as_key = draw(st.sampled_from(_places(document)))
    bad = draw(BAD_TEXT)
    if as_key:
        parent[bad] = parent.pop(key)
        path = path.rpartition(".")[0] + "." + bad if "." in path else bad
        # The path names the key as it is printed: escaped.
        return document, path
    parent[key] = bad
    return document, path


@examples(150)
@given(case=bad_documents(), as_yaml=st.booleans())
def test_a_bad_string_anywhere_is_refused_with_its_path(
    case: tuple[Any, str], as_yaml: bool
) -> None:
    document, path = case
    # Both formats write what they cannot hold as an escape (\\ud800, \\u0000), as a person would.
    text = (
        yaml.safe_dump(document, allow_unicode=False)
        if as_yaml
        else json.dumps(document, ensure_ascii=True)
    )
    with pytest.raises(ConfigError) as caught:
        parse_yaml(text, "doc.yaml", yaml) if as_yaml else parse_json(text, "doc.json")
    error = caught.value
    assert error.path == path
    assert error.problem.startswith(("a NUL character", "an unpaired surrogate"))
    assert "\n" not in str(error)
    # Never quoted: the string may be a credential.
    assert "(got" not in str(error)


def test_an_env_value_with_surrogates_is_refused_by_its_path() -> None:
    # The report's manifest, in the small: the value as the report wrote it.
    text = 'spec: {containers: [{env: [{name: A, value: x}, {name: B, value: "\\udcff\\ud800"}]}]}'
    with pytest.raises(
        ConfigError,
        match=r"^kf\.yaml: spec\.containers\[0\]\.env\[1\]\.value: an unpaired surrogate "
        r"\(U\+DCFF\) at character 1 of a string; expected UTF-8 text without NUL",
    ):
        parse_yaml(text, "kf.yaml", yaml)


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        (stat.S_IFREG | 0o644, None),
        (stat.S_IFDIR | 0o755, "a folder"),
        (stat.S_IFIFO | 0o600, "a FIFO (named pipe)"),
        (stat.S_IFCHR | 0o666, "a character device"),
        (stat.S_IFBLK | 0o660, "a block device"),
        (stat.S_IFSOCK | 0o777, "a socket"),
        (0, "not a regular file"),
    ],
)
def test_file_kind(mode: int, kind: str | None) -> None:
    assert file_kind(mode) == kind


def _fifo(tmp_path: Path) -> str:
    path = tmp_path / "job.yaml"
    os.mkfifo(path)  # no writer: an open without O_NONBLOCK would wait for one forever
    return str(path)


def _folder(tmp_path: Path) -> str:
    (tmp_path / "job.yaml").mkdir()
    return str(tmp_path / "job.yaml")


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (_fifo, "a FIFO \\(named pipe\\)"),
        (lambda _: "/dev/zero", "a character device"),
        (_folder, "a folder"),
    ],
)
def test_a_document_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, make: Any, kind: str
) -> None:
    path = make(tmp_path)
    with pytest.raises(
        ConfigError, match=rf"^{path}: the job file is {kind}; expected a regular file"
    ):
        read_text(path, "the job file")


def test_a_regular_file_through_a_link_is_read(tmp_path: Path) -> None:
    (tmp_path / "real.yaml").write_text("a: 1\n")
    (tmp_path / "job.yaml").symlink_to(tmp_path / "real.yaml")
    assert read_text(str(tmp_path / "job.yaml"), "the job file") == "a: 1\n"


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"env": ["A=1"], "argv": ["--", "python", "é.py"], "workers": 2}, None),
        ({"name": "x\udcff"}, "--name: a byte that is not UTF-8 (0xff) at character 2"),
        ({"env": ["A=1", "B=\udc80"]}, "--env[1]: a byte that is not UTF-8 (0x80) at character 3"),
        ({"argv": ["--", "python", "\ud800"]}, "COMMAND[1]: an unpaired surrogate (U+D800)"),
        ({"output_dir": "a\0"}, "--output-dir: a NUL character (\\0)"),
    ],
)
def test_check_flags(values: dict[str, Any], said: str | None) -> None:
    if said is None:
        check_flags(values)
        return
    with pytest.raises(UsageError) as caught:
        check_flags(values)
    assert str(caught.value).startswith(said), str(caught.value)
    assert str(caught.value).endswith("; expected UTF-8 text: the job's API takes no other")


def test_check_flags_leaves_local_files_alone() -> None:
    check_flags({"job": "job\udcff.yaml", "output": "\udcff"}, local=("job", "output"))
