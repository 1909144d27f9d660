"""Every document vtrain reads is bounded: aliases, values, depth and size, refused in one line.

The alias bomb of issue 32 (nine levels of `*a`, 500 bytes) sent a rehearsal
to 9.5 GB; here it is refused while its events are counted, before any value
is built. The property tests generate YAML and JSON documents with anchors
and aliases (cycles too), deep nesting, NUL and control characters, huge
numbers and empty lists; each gives a value or a ConfigError of one line.
The bombs also run in a child process under a 200 MiB address-space limit.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from bombs import alias_chain
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.documents import MAX_ALIASES, MAX_BYTES, MAX_DEPTH, MAX_NODES, parse_json, parse_yaml
from vtrain.errors import ConfigError, ErrorList, VtrainError, shown
from vtrain.tune.samplers import GridSampler, RandomSampler
from vtrain.tune.study import Study
from vtrain.tune.study_file import parse_study, read_study


def bomb(levels: int = 9, width: int = 9) -> str:
    """The billion laughs: each level a list of `width` aliases of the level below."""
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


STUDY_BOMB = (
    "metrics: [{metric_id: loss, goal: MINIMIZE}]\n" + alias_chain(7, "a") + "parameters:\n"
    "  - parameter_id: p\n"
    "    categorical_value_spec: {values: *x6}\n"
    "max_trial_count: 2\n"
)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (bomb(), rf"expands to more than {MAX_NODES} values \(line \d+\).*Hint: an alias"),
        (
            "a: &x 1\nb: [" + ", ".join(["*x"] * (MAX_ALIASES + 1)) + "]\n",
            rf"more than {MAX_ALIASES} aliases \(line 2\)",
        ),
        ("&a [1, *a]\n", r"the alias \*a is inside its own anchor \(line 1\)"),
        ("a: &m {b: [*m]}\n", r"the alias \*m is inside its own anchor"),
        (
            "".join(" " * i + "k:\n" for i in range(MAX_DEPTH + 5)),
            rf"nested more than {MAX_DEPTH} levels deep \(line {MAX_DEPTH}\)",
        ),
        # Deep through an alias: 40 levels, then the same 40 below another 40.
        (
            "a: &d " + "[" * 40 + "]" * 40 + "\nb: " + "[" * 40 + "*d" + "]" * 40 + "\n",
            rf"nested more than {MAX_DEPTH} levels deep",
        ),
        (
            "[" + ", ".join(["1"] * (MAX_NODES + 1)) + "]\n",
            rf"expands to more than {MAX_NODES} values \(line 1\)",
        ),
        ('a: {b: ["x\\0y"]}\n', r"a\.b\[0\]: a NUL character \(\\0\) in a string; expected"),
        ('"k\\0": 1\n', r"k\\x00: a NUL character"),
    ],
)
def test_a_yaml_document_past_a_bound_is_refused_in_one_line(text: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said) as caught:
        parse_yaml(text, "doc.yaml", yaml)
    assert str(caught.value).startswith("doc.yaml: ") and "\n" not in str(caught.value)


def test_aliases_within_the_bounds_read_as_pyyaml_reads_them() -> None:
    text = "base: &b {image: gcr.io/p/t:1, env: [{name: A, value: '1'}]}\nc: *b\nw: [*b, *b]\n"
    assert parse_yaml(text, "doc.yaml", yaml) == yaml.safe_load(text)
    assert parse_yaml(bomb(levels=4, width=9), "doc.yaml", yaml) == yaml.safe_load(bomb(4, 9))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[" * 100_000 + "]" * 100_000, rf"nested more than {MAX_DEPTH} levels deep"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), rf"nested more than {MAX_DEPTH} levels"),
        ("[" + ",".join(["0"] * (MAX_NODES + 1)) + "]", rf"expands to more than {MAX_NODES}"),
        ('{"a": ["\\u0000"]}', r"a\[0\]: a NUL character"),
        ("[" + "9" * 5000 + "]", r"not valid JSON: Exceeds the limit \(4300 digits\)"),
    ],
)
def test_a_json_document_past_a_bound_is_refused_in_one_line(text: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said) as caught:
        parse_json(text, "doc.json")
    assert "\n" not in str(caught.value)


def test_a_file_past_the_size_bound_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text("# " + "x" * MAX_BYTES + "\n")
    with pytest.raises(
        ConfigError, match=rf"study.yaml: the study file is too large \(got 'more than {MAX_BYTES}"
    ):
        read_study(str(path))
    with pytest.raises(ConfigError, match=r"doc: too large \(got '\d+ characters'\)"):
        parse_yaml("x" * (MAX_BYTES + 1), "doc", yaml)


def test_a_path_no_file_can_have_is_one_line() -> None:
    with pytest.raises(ConfigError, match=r"cannot read the study file: not a path this system"):
        read_study("study\0.yaml")


def _limited(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`vtrain ARGV` in a child whose address space is limited to 200 MiB."""
    limit = 200 << 20

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    # The timeout only keeps a regression from hanging the suite; the bounds are counts.
    return subprocess.run(
        [sys.executable, "-m", "vtrain", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        preexec_fn=cap,
        timeout=120,
    )


def test_tune_refuses_a_study_bomb_in_one_line_within_200_mib(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(STUDY_BOMB)
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    for study in ("bomb.yaml", "deep.json"):
        done = _limited(["tune", "--study", study, "--", "true"], tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.startswith(f"vtrain tune: error: {study}: "), done.stderr
        assert "more than" in done.stderr and done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bomb.yaml", "deep.json"]


# --- Generated documents -------------------------------------------------------------------

# Scalars as a hostile YAML text writes them: NUL and control characters, numbers past
# int()'s and float's limits, empty collections, YAML's own odd words.
_SCALARS = st.one_of(
    st.sampled_from(
        [
            '"\\0"',
            '"a\\x1bb"',
            '"\\u2028"',
            '"\\t\\r"',
            "~",
            "''",
            "[]",
            "{}",
            ".nan",
            "-.inf",
            "1e999",
            "0x1F",
            "0o17",
            "yes",
            "2026-01-01",
            "!!binary aGk=",
            "'***'",
            "-",
            "é",
            "9" * 4301,
            "-" + "9" * 300,
        ]
    ),
    st.integers(-(2**70), 2**70).map(str),
    st.text(st.sampled_from("abz09_-. ="), min_size=1, max_size=6).map(json.dumps),
)


@st.composite
def yaml_documents(draw: st.DrawFn) -> str:
    """Flow-style YAML with anchors, aliases (repeated, nested, now and then cyclic) and depth."""
    anchors: list[str] = []  # anchors whose value is complete
    opened: list[str] = []  # anchors still being written: an alias to one is a cycle

    def node(depth: int) -> str:
        kind = draw(st.integers(0, 9))
        if anchors and kind <= 2:
            # Several aliases of the newest anchor: what a bomb is made of.
            target = anchors[-1] if kind < 2 else draw(st.sampled_from(anchors))
            return "[" + ", ".join([f"*{target}"] * draw(st.integers(1, 12))) + "]"
        if opened and kind == 3 and draw(st.integers(0, 9)) == 0:
            return f"*{draw(st.sampled_from(opened))}"
        if depth > draw(st.integers(2, 90)) or kind <= 5:
            return draw(_SCALARS)
        name = f"n{len(anchors) + len(opened)}" if draw(st.booleans()) else None
        if name:
            opened.append(name)
        items = [node(depth + 1) for _ in range(draw(st.integers(0, 4)))]
        if kind <= 7:
            body = "[" + ", ".join(items) + "]"
        else:
            body = "{" + ", ".join(f"k{i}: {v}" for i, v in enumerate(items)) + "}"
        if name:
            opened.remove(name)
            anchors.append(name)
            return f"&{name} {body}"
        return body

    return "{" + ", ".join(f"top{i}: {node(1)}" for i in range(draw(st.integers(1, 6)))) + "}"


def _one_line(error: VtrainError) -> None:
    errors = error.errors if isinstance(error, ErrorList) else (error,)
    for e in errors:
        assert "\n" not in str(e), shown(e)


@examples(200)
@given(text=yaml_documents())
def test_a_generated_yaml_document_is_read_within_bounds_or_refused(text: str) -> None:
    try:
        document = parse_yaml(text, "doc.yaml", yaml)
    except ConfigError as e:
        _one_line(e)
        return
    # What blew up before: a walk of the document as a tree (issue 32's json.dumps). Its
    # memory is bounded by the count of values; the child processes above measure it.
    json.dumps(document, default=repr)
    try:
        parse_study(text, source="doc.yaml")
    except ConfigError as e:
        _one_line(e)


@examples(300)
@given(
    depth=st.integers(1, 3000),
    leaf=st.sampled_from(['"\\u0000"', "1e999", "-0", "[]", "{}", '"\\u001b[2J"', "9" * 4400]),
    wrap=st.sampled_from(["[{}]", '{{"k": {}}}']),
)
def test_a_generated_json_document_is_read_within_bounds_or_refused(
    depth: int, leaf: str, wrap: str
) -> None:
    text = leaf
    for _ in range(depth):
        text = wrap.format(text)
    try:
        document = parse_json(text, "doc.json")
    except ConfigError as e:
        _one_line(e)
        assert depth * 1 >= MAX_DEPTH or "NUL" in str(e) or "4300" in str(e), str(e)
        return
    json.dumps(document)


# --- Study documents ------------------------------------------------------------------------

_STUDY = {
    "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
    "parameters": [
        {"parameter_id": "lr", "double_value_spec": {"min_value": 0.0, "max_value": 1.0}},
        {
            "parameter_id": "layers",
            "integer_value_spec": {"min_value": 0, "max_value": 4},
            "conditional_parameter_specs": [
                {
                    "parent_int_values": {"values": [0]},
                    "parameter_spec": {
                        "parameter_id": "w",
                        "discrete_value_spec": {"values": [0, 8]},
                    },
                }
            ],
        },
        {"parameter_id": "opt", "categorical_value_spec": {"values": ["adam", "sgd"]}},
    ],
    "algorithm": "GRID_SEARCH",
    "max_trial_count": 4,
    "parallel_trial_count": 2,
}
_HOSTILE = st.one_of(
    st.none(),
    st.builds(list),
    st.builds(dict),
    st.booleans(),
    st.just("\0"),
    st.just("a\x1b[2J"),
    st.integers(-(2**70), 2**70),
    st.sampled_from([10**4400, 2**63, -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.just("x"), max_size=3),
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        found.extend(_paths(item, (*path, key)))
    return found


@examples(300)
@given(data=st.data(), as_yaml=st.booleans())
def test_a_hostile_study_gives_a_study_that_samples_or_one_line_errors(
    data: st.DataObject, as_yaml: bool
) -> None:
    document = json.loads(json.dumps(_STUDY))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(document)[1:]))
        parent: Any = document
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and data.draw(st.booleans()):
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = data.draw(_HOSTILE)
    try:
        text = yaml.safe_dump(document) if as_yaml else json.dumps(document)
    except (ValueError, yaml.YAMLError):
        return  # the writer cannot write it (an int past 4300 digits)
    try:
        got = parse_study(text, source="study", yaml=as_yaml)
    except ConfigError as e:
        _one_line(e)
        return
    assert isinstance(got, Study)
    sampler = GridSampler(got) if got.algorithm == "GRID_SEARCH" else RandomSampler(got, 0)
    values = sampler.suggest(1)
    if values is not None:
        assert all("\0" not in flag for flag in got.flags(values))
