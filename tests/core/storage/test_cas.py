"""The compare-and-set of one small document, on each store: a write at a stale token loses.

Each row is a story told to one document, step by step: ("get", T, data) reads it,
expects `data` (None: there is none) and keeps the token as T; ("put", data, T, ok)
writes `data` (None removes it) at token T and expects `ok`. Every row runs on a
local disk, a FUSE folder and gs:// on the emulator.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vtrain.storage import open_location
from vtrain.storage.cas import CompareAndSet

ROWS = {
    "created where there is none": [
        ("get", "a", None),
        ("put", b"one", "a", True),
        ("get", "b", b"one"),
    ],
    "a stale create loses": [
        ("get", "a", None),
        ("put", b"one", "a", True),
        ("put", b"two", "a", False),
        ("get", "b", b"one"),
    ],
    "replaced at the version read": [
        ("get", "a", None),
        ("put", b"one", "a", True),
        ("get", "b", b"one"),
        ("put", b"two", "b", True),
        ("get", "c", b"two"),
    ],
    "a stale replace loses": [
        ("get", "a", None),
        ("put", b"one", "a", True),
        ("get", "b", b"one"),
        ("put", b"two", "b", True),
        ("put", b"three", "b", False),
        ("get", "c", b"two"),
    ],
    "removed at the version read": [
        ("get", "a", None),
        ("put", b"one", "a", True),
        ("get", "b", b"one"),
        ("put", None, "b", True),
        ("get", "c", None),
    ],
    "a stale remove loses": [
        ("get", "a", None),
        ("put", b"one", "a", True),
        ("get", "b", b"one"),
        ("put", b"two", "b", True),
        ("put", None, "b", False),
        ("get", "c", b"two"),
    ],
    "of two writers that read one version, one wins": [
        ("get", "a", None),
        ("get", "b", None),
        ("put", b"one", "a", True),
        ("put", b"two", "b", False),
        ("get", "c", b"one"),
    ],
    "created again after a removal": [
        ("get", "a", None),
        ("put", b"one", "a", True),
        ("get", "b", b"one"),
        ("put", None, "b", True),
        ("put", b"two", "b", False),
        ("get", "c", None),
        ("put", b"two", "c", True),
        ("get", "d", b"two"),
    ],
    "removing what is not there": [
        ("get", "a", None),
        ("put", None, "a", True),
        ("get", "b", None),
    ],
}


def document(uri: str, **options: object) -> CompareAndSet:
    location = open_location(uri, **options)
    location.makedirs()
    return location.cas("doc.json")


@pytest.mark.parametrize("steps", ROWS.values(), ids=ROWS.keys())
def test_compare_and_set(medium, steps: list[tuple[object, ...]]) -> None:
    cas, tokens = document(medium.uri, **medium.options), {}
    for number, step in enumerate(steps):
        if step[0] == "get":
            _, name, expected = step
            data, tokens[name] = cas.get()
            assert data == expected, (number, step)
        else:
            _, data, name, ok = step
            assert cas.put(data, tokens[name]) is ok, (number, step)


def test_each_store_names_its_document(medium) -> None:
    assert document(medium.uri, **medium.options).uri.endswith("/root/doc.json")


def test_a_folder_is_never_made_again_by_a_write(tmp_path: Path) -> None:
    # A lease's heartbeat after its folder was deleted must not bring the folder back.
    cas = document(str(tmp_path / "root"))
    _, token = cas.get()
    (tmp_path / "root").rmdir()
    with pytest.raises(FileNotFoundError):
        cas.put(b"one", token)
    assert not (tmp_path / "root").exists()
