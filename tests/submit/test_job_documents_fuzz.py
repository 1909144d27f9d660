"""Hostile job documents: every one is read, checked and rehearsed, or refused with a VtrainError.

The seeds are the golden renders of every target (and a Katib Experiment);
each example changes a few places in one of them to what an attacker or a
careless edit puts there: nothing, empty lists and mappings, huge and negative
numbers, NaN, text with NUL and control characters, deep nesting. The same
documents also go through the file reader as YAML with aliases. `nox -s fuzz`
runs these at 10,000 examples.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st
from targets import GOLDEN, STUDY

from vtrain.errors import ErrorList, VtrainError, shown
from vtrain.local.plan import Plan
from vtrain.redact import redact
from vtrain.submit.delivery import dump
from vtrain.submit.job_file import load_job, read_job
from vtrain.submit.rehearse import rehearsal


def _experiment() -> dict[str, Any]:
    """A Katib Experiment of PyTorchJobs, rendered from the golden study."""
    from vtrain.submit import flow
    from vtrain.submit.engines import RULES
    from vtrain.submit.options import JobOptions

    options = JobOptions.from_options(
        "kubeflow",
        ["--", "python", "t.py"],
        rules=RULES,
        name="golden",
        workers=1,
        image="gcr.io/p/t:1",
        framework="pytorch",
        study=STUDY,
    )
    return flow.render(options).document


SEEDS = {path.stem: json.loads(path.read_text()) for path in sorted(GOLDEN.glob("*.json"))}
SEEDS["experiment"] = _experiment()

# What a careless edit or an attacker writes in place of a value.
_TEXT = st.text(
    st.sampled_from(["a", "Z", "0", "=", "-", " ", "\0", "\n", "\x1b", "\u2028", "é", "*", "$"]),
    max_size=8,
)
HOSTILE = st.one_of(
    st.none(),
    # Built afresh each time: a later change inside one must not change the next example.
    st.builds(list),
    st.builds(dict),
    st.builds(lambda: [{}]),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 100_000, 2**31, 2**63, 10**4400]),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
    st.lists(_TEXT, max_size=3),
    st.integers(50, 200).map(lambda n: json.loads("[" * n + "]" * n)),
    st.dictionaries(_TEXT, _TEXT, max_size=2),
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if len(path) > 20:
        return found  # inside a deep list put there before: nothing there to learn
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*path, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(_paths(item, (*path, i)))
    return found


@st.composite
def hostile_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A golden job with one to three places replaced, emptied or removed."""
    document = copy.deepcopy(SEEDS[draw(st.sampled_from(sorted(SEEDS)))])
    for _ in range(draw(st.integers(1, 3))):
        places = _paths(document)[1:]
        if not places:
            break  # every field is gone
        path = draw(st.sampled_from(places))
        parent: Any = document
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = draw(HOSTILE)
    return document


def _read_and_rehearse(document: Any, out: Path, trial: str | None) -> None:
    """What `submit --job` and `local run --job` do with a document, short of running it."""
    job = load_job(document, source="job.json", name="fuzz")
    dump(redact(job.document), "yaml")  # what render and --dry-run print
    found = rehearsal(job, [sys.executable], trial, str(out))
    Plan.from_options([sys.executable], output_dir=str(out), **found.options)


def _one_line_or_listed(error: VtrainError) -> None:
    text = shown(error)
    if isinstance(error, ErrorList):
        assert all("\n" not in str(e) for e in error.errors), text
    else:
        assert "\n" not in text, text


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_every_seed_is_read_and_rehearsed(name: str, tmp_path: Path) -> None:
    _read_and_rehearse(copy.deepcopy(SEEDS[name]), tmp_path / "out", None)


@examples(150)
@given(document=hostile_documents(), trial=st.sampled_from([None, "1", "2"]))
def test_a_hostile_document_is_rehearsed_or_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, document: dict[str, Any], trial: str | None
) -> None:
    # One path for every example (mktemp lists its folder each time: quadratic at 10,000).
    out = tmp_path_factory.getbasetemp() / "never-created"
    try:
        _read_and_rehearse(document, out, trial)
    except VtrainError as e:
        _one_line_or_listed(e)
    # Checked before anything is written: no refusal and no plan leaves a folder behind.
    assert not out.exists()


@examples(60)
@given(document=hostile_documents(), shared=st.integers(0, 3))
def test_a_hostile_yaml_file_with_aliases_is_read_or_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, document: dict[str, Any], shared: int
) -> None:
    import yaml

    # The same object in several places is written once with an anchor, then by alias.
    for _ in range(shared):
        document.setdefault("x-shared", []).append(document.get("spec") or document)
    path = tmp_path_factory.getbasetemp() / "fuzzed-job.yaml"
    try:
        path.write_text(yaml.safe_dump(document, allow_unicode=True))
    except (yaml.YAMLError, ValueError, RecursionError):
        return  # PyYAML cannot write it (a value that refers to itself, 10**4400)
    try:
        read_job(str(path))
    except VtrainError as e:
        _one_line_or_listed(e)
