"""Every `Location` operation, on a local disk, a FUSE-mapped gs:// URI and the GCS emulator."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vtrain.errors import StorageError
from vtrain.storage import FuseLocation, GcsLocation, LocalLocation, Location, open_location

KINDS = {"local": LocalLocation, "fuse": FuseLocation, "gcs": GcsLocation}


@pytest.fixture
def loc(medium) -> Location:
    location = open_location(medium.uri, **medium.options)
    assert type(location) is KINDS[medium.name]
    return location


def test_write_then_read_bytes(loc: Location) -> None:
    loc.write_bytes("a.bin", b"hello")
    loc.write_bytes("sub/b.bin", bytearray(b"\x00\x01"))
    loc.write_bytes("c.bin", memoryview(b"xyz"))
    assert loc.read_bytes("a.bin") == b"hello"
    assert loc.read_bytes("sub/b.bin") == b"\x00\x01"
    assert loc.read_bytes("c.bin") == b"xyz"


def test_overwrite_replaces_content(loc: Location) -> None:
    loc.write_bytes("a", b"long content")
    loc.write_bytes("a", b"short")
    assert loc.read_bytes("a") == b"short"


def test_streaming_open_write_and_read(loc: Location) -> None:
    data = os.urandom(3 << 20)
    with loc.open_write("big/stream.bin") as f:
        for i in range(0, len(data), 1 << 20):
            f.write(data[i : i + (1 << 20)])
    with loc.open_read("big/stream.bin") as f:
        assert f.read() == data


def test_list_exists_and_makedirs(loc: Location) -> None:
    assert loc.list() == []
    assert not loc.exists()
    loc.write_bytes("f1", b"1")
    loc.write_bytes("d/f2", b"2")
    loc.write_bytes("d/e/f3", b"3")
    loc.makedirs("empty")
    assert loc.exists() and loc.exists("f1") and loc.exists("d") and loc.exists("d/e/f3")
    assert not loc.exists("nope") and not loc.exists("d/nope")
    assert not loc.exists("empty"), "an empty folder does not exist, as on an object store"
    assert [n for n in loc.list() if n != "empty"] == ["d", "f1"]
    assert loc.list("d") == ["e", "f2"]
    assert loc.list("missing") == []


def test_remove_file_folder_and_missing(loc: Location) -> None:
    loc.write_bytes("keep", b"k")
    loc.write_bytes("gone", b"g")
    loc.write_bytes("tree/a", b"a")
    loc.write_bytes("tree/b/c", b"c")
    loc.remove("gone")
    loc.remove("tree")
    loc.remove("never-there")
    assert loc.list() == ["keep"]


def test_join_is_a_subfolder(loc: Location) -> None:
    child = loc.join("x", "y")
    child.write_bytes("z", b"!")
    assert loc.read_bytes("x/y/z") == b"!"
    assert child.uri.endswith("/x/y")
    assert type(child) is type(loc)


def test_upload_and_download_file_and_folder(loc: Location, tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "n").mkdir(parents=True)
    (src / "one").write_bytes(b"1" * 1000)
    (src / "n" / "two").write_bytes(os.urandom(5 << 20))
    loc.upload(str(src), "up")
    loc.upload(str(src / "one"), "single")
    assert loc.list("up") == ["n", "one"]
    assert loc.read_bytes("single") == b"1" * 1000
    out = tmp_path / "out"
    loc.download("up", str(out))
    assert (out / "n" / "two").read_bytes() == (src / "n" / "two").read_bytes()
    assert (out / "one").read_bytes() == b"1" * 1000
    loc.download("single", str(tmp_path / "single.copy"))
    assert (tmp_path / "single.copy").read_bytes() == b"1" * 1000


def test_download_fileobj_streams(loc: Location, tmp_path: Path) -> None:
    data = os.urandom(2 << 20)
    loc.write_bytes("f", data)
    with open(tmp_path / "copy", "wb") as out:
        loc.download_fileobj("f", out)
    assert (tmp_path / "copy").read_bytes() == data


def test_reading_a_missing_file_says_which(loc: Location) -> None:
    with pytest.raises(StorageError, match=r"missing\.bin: cannot read: not found"):
        loc.read_bytes("missing.bin")


@pytest.mark.parametrize("bad", ["../escape", "a/../../b", "/abs", "a//b", "a/./b", "", "x\\y"])
def test_names_that_could_escape_are_refused(loc: Location, bad: str) -> None:
    with pytest.raises(StorageError, match="name"):
        loc.write_bytes(bad, b"no")
    with pytest.raises(StorageError, match="name"):
        loc.join(bad, "x") if bad else loc.read_bytes(bad)


def test_atomic_rename_only_on_a_local_disk(loc: Location, medium) -> None:
    assert loc.atomic_rename is (medium.name == "local")
    assert (loc.path is None) is (medium.name == "gcs")
