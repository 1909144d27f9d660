"""`records()` and `read_share()`: every format, every medium, record sharding, format choice."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from data_files import tfrecord_bytes, write_split

from vtrain import StorageError, UsageError
from vtrain.data import Share, files, read_share, records
from vtrain.storage import open_location


@pytest.mark.parametrize("kind", ["jsonl", "csv", "tfrecord"])
def test_the_readers_together_read_every_record_once(tmp_path: Path, kind: str) -> None:
    every = write_split(tmp_path / "d", 5, per_file=4, kind=kind)
    uri = str(tmp_path / "d" / "*")
    got = [r for rank in range(3) for r in records(uri=uri, rank=rank, world_size=3, environ={})]
    key = json.dumps if kind != "tfrecord" else bytes
    assert sorted(map(key, got)) == sorted(map(key, every))  # type: ignore[arg-type]


@pytest.mark.parametrize(("files_", "readers"), [(1, 4), (2, 3), (3, 3), (5, 2)])
def test_record_sharding_splits_few_files_evenly(tmp_path: Path, files_: int, readers: int) -> None:
    every = write_split(tmp_path / "d", files_, per_file=5)
    uri = str(tmp_path / "d" / "*")
    shares = [
        list(records(uri=uri, rank=r, world_size=readers, by_record=True, environ={}))
        for r in range(readers)
    ]
    got = [json.dumps(r) for s in shares for r in s]
    assert sorted(got) == sorted(json.dumps(r) for r in every) and len(set(got)) == len(got)
    assert max(map(len, shares)) - min(map(len, shares)) <= 1


def test_records_on_every_medium(medium) -> None:  # type: ignore[no-untyped-def]
    location = open_location(medium.uri, **medium.options)
    rows = [{"i": i} for i in range(6)]
    location.write_bytes("a.jsonl", "".join(json.dumps(r) + "\n" for r in rows[:3]).encode())
    location.write_bytes("b.jsonl", "".join(json.dumps(r) + "\n" for r in rows[3:]).encode())
    location.write_bytes("c.tfrecord", tfrecord_bytes([b"x", b"y"]))
    opts = {"environ": medium.options["environ"], "gcs_mount": medium.options.get("gcs_mount")}
    assert list(records(uri=medium.sub("*.jsonl"), rank=0, world_size=1, **opts)) == rows
    got = records(uri=medium.sub("*.tfrecord"), rank=0, world_size=1, **opts)
    assert list(got) == [b"x", b"y"]


def test_the_format_comes_from_the_argument_then_the_variable_then_the_suffix(
    tmp_path: Path,
) -> None:
    (tmp_path / "data-0").write_text('{"a": 1}\n')
    (tmp_path / "t.csv").write_text("a\n1\n")
    share = files(uri=str(tmp_path / "data-*"), rank=0, world_size=1, environ={})
    with pytest.raises(
        UsageError,
        match=r"data-0: cannot tell the record format from the file "
        r"name .*Hint: pass format=",
    ):
        list(read_share(share))
    assert list(read_share(share, format="jsonl")) == [{"a": 1}]
    env = {"AIP_DATA_FORMAT": "jsonl"}
    assert list(records(uri=str(tmp_path / "data-*"), rank=0, world_size=1, environ=env)) == [
        {"a": 1}
    ]
    assert list(records(uri=str(tmp_path / "*.csv"), rank=0, world_size=1, environ={})) == [
        {"a": "1"}
    ]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"format": "parquet"},
            r"format: unknown record format \(got 'parquet'\); expected "
            r"jsonl or csv or tf-record",
        ),
        ({"check_crc": "no"}, r"check_crc: not a bool \(got 'no'\)"),
    ],
)
def test_bad_arguments_fail_at_the_call(kwargs: dict[str, object], match: str) -> None:
    share = Share(split="training", uri="x", files=["a.jsonl"], rank=0, world_size=1)
    with pytest.raises(UsageError, match=match):
        read_share(share, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"share: not a Share \(got 'a.jsonl'\)"):
        read_share("a.jsonl")  # type: ignore[arg-type]


def test_a_link_to_itself_gets_a_hint_about_links_not_writing(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "loop.jsonl").symlink_to("loop.jsonl")
    with pytest.raises(StorageError) as caught:
        list(records(uri=str(tmp_path / "d" / "*"), rank=0, world_size=1, environ={}))
    assert re.search(
        r"loop.jsonl: cannot open for reading: Too many levels of symbolic links\. Hint: a "
        r"symbolic link on the path points to itself, or links point in a circle",
        str(caught.value),
    )
    assert "write" not in str(caught.value)


def test_a_file_that_cannot_be_read_gets_a_hint_about_reading(tmp_path: Path) -> None:
    # A socket is listed like a file, and opening it fails with an errno that has no hint
    # of its own: the default hint is then the one for a read.
    (tmp_path / "d").mkdir()
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tmp_path / "d" / "s.jsonl"))
        with pytest.raises(
            StorageError,
            match=r"s.jsonl: cannot open for reading: .*Hint: check that the file exists and "
            r"this user may read it$",
        ):
            list(records(uri=str(tmp_path / "d" / "*"), rank=0, world_size=1, environ={}))
