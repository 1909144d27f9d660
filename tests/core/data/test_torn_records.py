"""Issue 42, item 2: a mangled file gives records or one StorageError, in bounded memory.

Any 8 bytes and their masked CRC make a valid TFRecord header, so a copy that
lost its head can claim a record of up to 2**64 bytes; a text file that lost
its line ends is one line. Every reader, kept records and skipped ones alike,
believes a length only when the file holds it.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from data_files import starts_of, tfrecord_bytes
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.data import records
from vtrain.data.csv_records import read_csv
from vtrain.data.jsonl import read_jsonl
from vtrain.data.lines import LINE_LIMIT
from vtrain.data.tfrecord import BLOCK, masked_crc32c, read_tfrecord
from vtrain.errors import StorageError
from vtrain.storage import open_location


def header(length: int) -> bytes:
    """A valid TFRecord header for a record of `length` bytes."""
    packed = struct.pack("<Q", length)
    return packed + struct.pack("<I", masked_crc32c(packed))


def read_all(path: Path, kind: str, first: int = 0, step: int = 1) -> list[Any]:
    def reopen() -> Any:
        return open(path, "rb")

    with reopen() as stream:
        if kind == "tf-record":
            return list(read_tfrecord(stream, str(path), first, step))
        if kind == "jsonl":
            return list(read_jsonl(stream, str(path), reopen, first, step))
        return list(read_csv(stream, str(path), reopen, first, step))


def test_a_copy_that_lost_its_first_12_bytes_is_refused_naming_the_length(tmp_path: Path) -> None:
    # The first record's data begins with a header of its own: 2**64 - 1 bytes, CRC and all.
    data = header(2**64 - 1) + b"rest of the record"
    whole = tfrecord_bytes([data, b"second"])
    path = tmp_path / "torn.tfrecord"
    path.write_bytes(whole[12:])
    with pytest.raises(
        StorageError,
        match=rf"^{path}: a torn record of 18446744073709551615 bytes \(the file ends "
        r"\d+ bytes early\) at byte offset 0\. Hint: ",
    ):
        read_all(path, "tf-record")


def test_a_forged_length_is_refused_on_gcs(gcs_emulator: Any) -> None:
    # Through the storage client's chunked reader, which learns the object's size to seek.
    bucket = gcs_emulator.new_bucket()
    location = open_location(f"gs://{bucket}/d", environ=gcs_emulator.environ)
    location.write_bytes("p.tfrecord", tfrecord_bytes([header(2**64 - 1) + b"rest"])[12:])
    with pytest.raises(
        StorageError,
        match=rf"^gs://{bucket}/d/p.tfrecord: a torn record of 18446744073709551615 bytes .* "
        r"at byte offset 0",
    ):
        list(records(uri=f"gs://{bucket}/d/*", rank=0, world_size=1, environ=gcs_emulator.environ))


@pytest.mark.parametrize(("first", "step"), [(0, 1), (1, 2), (0, 2)])
def test_a_forged_length_is_refused_whether_kept_or_skipped(
    tmp_path: Path, first: int, step: int
) -> None:
    # Record 1 claims 2**63 bytes the file does not have: a reader that skips it (by_record's
    # stride) refuses it as one that keeps it does, without reading what it claims.
    head = tfrecord_bytes([b"zero"])
    path = tmp_path / "forged.tfrecord"
    path.write_bytes(head + header(2**63) + b"x" * 100)
    with pytest.raises(
        StorageError, match=rf"a torn record of {2**63} bytes .* at byte offset {len(head)}"
    ):
        read_all(path, "tf-record", first, step)


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_a_line_without_an_end_is_refused_in_bounded_memory(tmp_path: Path, kind: str) -> None:
    # 256 MiB without a line end after two short lines: read whole, it would be one string.
    path = tmp_path / f"long.{kind}"
    top = "a\n1\n" if kind == "csv" else '{"a": 1}\n{"a": 2}\n'
    with open(path, "wb") as f:
        f.write(top.encode())
        for _ in range(256):
            f.write(b"x" * (1 << 20))
    child = (
        "import sys\n"
        "from vtrain.data import records\n"
        "from vtrain.errors import StorageError\n"
        "try:\n"
        f"    list(records(uri=sys.argv[1], format={kind!r}, rank=0, world_size=1, environ={{}}))\n"
        "except StorageError as e:\n"
        "    print(e)\n"
        "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", child, str(path)], capture_output=True, text=True, check=True
    )
    error, peak_kib = done.stdout.splitlines()
    assert error.startswith(  # a csv header is no row, but it is a line
        f"{path}: line 3 is longer than {LINE_LIMIT} characters, at byte offset {len(top)}"
    )
    assert int(peak_kib) / 1024 < 160, f"peak {int(peak_kib) / 1024:.0f} MiB"


def text_file(kind: str, rows: list[dict[str, str]]) -> bytes:
    if kind == "jsonl":
        return "".join(json.dumps(r) + "\n" for r in rows).encode()
    return ("k,v\n" + "".join(f"{r['k']},{r['v']}\n" for r in rows)).encode()


@st.composite
def mangled(draw: st.DrawFn) -> tuple[str, bytes]:
    """A real file of one format, then a few of: its head cut, its tail cut, bytes flipped,
    a forged record header (TFRecord) or its line ends lost (text)."""
    kind = draw(st.sampled_from(["tf-record", "jsonl", "csv"]))
    if kind == "tf-record":
        records = draw(st.lists(st.binary(max_size=40), max_size=8))
        if draw(st.booleans()):  # a record that holds a valid header of its own, as data can
            length = draw(st.sampled_from([2**64 - 1, 2**63, BLOCK + 1, 10**12, 3]))
            records.insert(0, header(length) + draw(st.binary(max_size=8)))
        data = bytearray(tfrecord_bytes(records))
        starts = starts_of(records)
    else:
        text = st.text(alphabet="abc ü\"'", max_size=6)
        rows = draw(st.lists(st.fixed_dictionaries({"k": text, "v": text}), max_size=8))
        data = bytearray(text_file(kind, rows))
        starts = [0]
    for _ in range(draw(st.integers(1, 3))):
        damage = draw(st.sampled_from(["head", "tail", "flip", "forge"]))
        if damage == "head" and data:  # 12 bytes: the first record's data becomes a header
            del data[: draw(st.sampled_from([12, 1, 4, 13]) | st.integers(1, 16))]
        elif damage == "tail" and data:
            del data[len(data) - draw(st.integers(1, len(data))) :]
        elif damage == "flip" and data:
            at = draw(st.integers(0, len(data) - 1))
            data[at] ^= draw(st.integers(1, 255))
        elif damage == "forge":
            at = draw(st.integers(0, len(data)))
            if kind == "tf-record":
                if draw(st.booleans()):  # at a record's start, where a reader takes it as one
                    at = min(draw(st.sampled_from(starts)), len(data))
                length = draw(st.integers(0, 2**64 - 1) | st.sampled_from([2**64 - 1, BLOCK]))
                data[at:at] = header(length)
            else:
                data = bytearray(data.replace(b"\n", b" "))
    return kind, bytes(data)


@examples(300)
@given(mangled(), st.integers(0, 3), st.integers(1, 3))
def test_a_mangled_file_gives_records_or_one_storage_error(
    case: tuple[str, bytes], first: int, step: int
) -> None:
    kind, data = case
    with tempfile.TemporaryDirectory() as name:
        path = Path(name) / "f"
        path.write_bytes(data)
        tracemalloc.start()
        try:
            read_all(path, kind, first, step)
        except StorageError as e:
            assert str(e).startswith(f"{path}: "), e  # the file is named first
            assert "byte offset" in str(e) or "header names column" in str(e), e
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    # A block and its records at most: never what a forged length claims.
    assert peak < 4 * BLOCK + 8 * len(data), f"peak {peak} bytes for a file of {len(data)}"
