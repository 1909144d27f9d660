"""Expanding patterns: one matcher on a local disk, a FUSE folder and gs:// (the emulator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vtrain import StorageError
from vtrain.data.listing import expand, pattern_regex
from vtrain.storage import open_location


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("training-*", "training-00001.jsonl", True),
        ("training-*", "sub/training-00001.jsonl", False),
        ("*/training-*", "sub/training-1", True),
        ("**/t-?.csv", "t-1.csv", True),
        ("**/t-?.csv", "a/b/t-1.csv", True),
        ("**/t-?.csv", "a/b/t-12.csv", False),
        ("t-[0-2].csv", "t-1.csv", True),
        ("t-[!0-2].csv", "t-1.csv", False),
        ("a+b(1).csv", "a+b(1).csv", True),
    ],
)
def test_pattern_regex(pattern: str, name: str, matches: bool) -> None:
    assert bool(pattern_regex(pattern).fullmatch(name)) is matches


NAMES = [
    "training-00002.jsonl",
    "training-00000.jsonl",
    "training-00001.jsonl",
    "validation-00000.jsonl",
    "sub/training-00009.jsonl",
]


def test_every_medium_expands_alike(medium) -> None:  # type: ignore[no-untyped-def]
    location = open_location(medium.uri, **medium.options)
    for name in NAMES:
        location.write_bytes(name, b"{}\n")
    env = medium.options["environ"]
    mount = medium.options.get("gcs_mount")
    found = expand(medium.sub("training-*"), where="p", environ=env, gcs_mount=mount)
    tails = [f.rsplit("/", 1)[1] for f in found]
    assert tails == ["training-00000.jsonl", "training-00001.jsonl", "training-00002.jsonl"]
    if medium.name == "gcs":
        assert all(f.startswith("gs://") for f in found)
    else:  # a path any framework can open, also for gs:// through the mount
        assert all(Path(f).is_file() for f in found)
    deep = expand(medium.sub("**/training-*"), where="p", environ=env, gcs_mount=mount)
    assert len(deep) == 4
    one = expand(medium.sub("validation-00000.jsonl"), where="p", environ=env, gcs_mount=mount)
    assert [f.rsplit("/", 1)[1] for f in one] == ["validation-00000.jsonl"]
    folder = expand(medium.uri, where="p", environ=env, gcs_mount=mount)
    assert len(folder) == len(NAMES)
    assert expand(medium.sub("nothing-*"), where="p", environ=env, gcs_mount=mount) == []


def test_a_wildcard_in_the_bucket_is_refused() -> None:
    with pytest.raises(StorageError, match=r"AIP_TRAINING_DATA_URI: a wildcard in the bucket"):
        expand("gs://bucket-*/x", where="AIP_TRAINING_DATA_URI", environ={})
