"""TFRecord framing: records back byte for byte; a flipped byte or a cut names file and offset."""

from __future__ import annotations

import io
import logging
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import pytest
from data_files import starts_of, tfrecord_bytes
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain import StorageError
from vtrain.data import masked_crc, tfrecord
from vtrain.data.cursor import Cursor
from vtrain.data.tfrecord import read_tfrecord, read_tfrecord_at
from vtrain.storage import crc32c

RECORDS = [b"", b"one", b"\x00" * 300, b"last record"]
DATA = tfrecord_bytes(RECORDS)
SECOND = 12 + 0 + 4  # where record 1 starts
THIRD = SECOND + 12 + 3 + 4


def read(data: bytes, first: int = 0, step: int = 1, **kw: bool) -> tuple[list[bytes], int]:
    gen = read_tfrecord(io.BytesIO(data), "f.tfrecord", first, step, **kw)
    out: list[bytes] = []
    while True:
        try:
            out.append(next(gen))
        except StopIteration as stop:
            return out, stop.value


def test_records_come_back_byte_for_byte() -> None:
    assert read(DATA) == (RECORDS, 4)
    assert read(DATA, 1, 2) == ([RECORDS[1], RECORDS[3]], 4)
    assert read(b"") == ([], 0)


def flipped(at: int) -> bytes:
    data = bytearray(DATA)
    data[at] ^= 0x01
    return bytes(data)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (
            flipped(SECOND + 12 + 1),
            r"f.tfrecord: a corrupt record \(its data checksum does not "
            rf"match\) at byte offset {SECOND}",
        ),
        (flipped(THIRD), rf"a corrupt record length .* at byte offset {THIRD}"),
        (flipped(THIRD + 9), rf"a corrupt record length .* at byte offset {THIRD}"),
        (
            DATA[: THIRD + 5],
            rf"a torn record header \(the file ends inside it\) at byte offset "
            rf"{THIRD}",
        ),
        (
            DATA[: THIRD + 100],
            rf"a torn record of 300 bytes \(the file ends 216 bytes early\) at "
            rf"byte offset {THIRD}",
        ),
    ],
)
def test_damage_names_the_file_and_offset(data: bytes, match: str) -> None:
    with pytest.raises(StorageError, match=match):
        read(data)


def test_check_crc_false_skips_the_data_checksum_only() -> None:
    bad_data = flipped(SECOND + 12 + 1)
    assert read(bad_data, check_crc=False)[0][1] == b"ooe"  # n (0x6e) ^ 1
    with pytest.raises(StorageError, match="corrupt record length"):
        read(flipped(THIRD), check_crc=False)


def test_a_skipped_record_is_not_checksummed_as_tensorflow_skips() -> None:
    # Record 1's data is damaged, but a reader with stride (0, 2) never returns it.
    assert read(flipped(SECOND + 12 + 1), 0, 2)[0] == [RECORDS[0], RECORDS[2]]


def test_a_cursor_reads_on_from_a_record_boundary_with_its_stride() -> None:
    cursor = Cursor(offset=SECOND, records=1, skip=1, step=2)
    got = list(read_tfrecord_at(io.BytesIO(DATA), "f.tfrecord", cursor))
    assert got == [RECORDS[2]] and (cursor.offset, cursor.records, cursor.skip) == (len(DATA), 4, 0)


@contextmanager
def blocks_of(size: int) -> Iterator[None]:
    """Read `size` bytes at a time, and check even two records with one CRC."""
    with mock.patch.object(tfrecord, "BLOCK", size), mock.patch.object(masked_crc, "FEW", 2):
        yield


SOME = st.binary(max_size=40) | st.sampled_from([b"", b"same", b"x" * 30])  # lengths that repeat
RECORD_LISTS = st.lists(SOME, max_size=40)


@examples(200)
@given(RECORD_LISTS, st.integers(1, 300), st.integers(0, 4), st.integers(1, 4), st.booleans())
def test_every_block_size_and_stride_reads_the_records_it_keeps(
    records: list[bytes], block: int, first: int, step: int, check_crc: bool
) -> None:
    with blocks_of(block):
        assert read(tfrecord_bytes(records), first, step, check_crc=check_crc) == (
            records[first::step],
            len(records),
        )


@examples(100)
@given(RECORD_LISTS, st.integers(1, 300), st.integers(1, 3), st.data())
def test_a_cursor_taken_between_records_resumes_there(
    records: list[bytes], block: int, step: int, data: st.DataObject
) -> None:
    framed = tfrecord_bytes(records)
    kept = records[::step]
    stop = data.draw(st.integers(0, len(kept)))
    cursor = Cursor(step=step)
    with blocks_of(block):
        gen = read_tfrecord_at(io.BytesIO(framed), "f.tfrecord", cursor)
        head = [next(gen) for _ in range(stop)]
        gen.close()
        assert cursor.count == stop
        rest = list(read_tfrecord_at(io.BytesIO(framed), "f.tfrecord", cursor))
    assert head + rest == kept
    assert (cursor.offset, cursor.records, cursor.count) == (len(framed), len(records), len(kept))


@examples(300)
@given(
    st.lists(st.binary(max_size=40), min_size=1, max_size=30),
    st.integers(1, 300),
    st.booleans(),
    st.data(),
)
def test_a_flipped_bit_stops_the_read_at_its_record(
    records: list[bytes], block: int, check_crc: bool, data: st.DataObject
) -> None:
    # A flip in a header fails its length checksum; in the data or its checksum, the data
    # checksum (unless check_crc=False). Either way the records before it come out first.
    framed = bytearray(tfrecord_bytes(records))
    starts = starts_of(records)
    at = data.draw(st.integers(0, len(framed) - 1))
    framed[at] ^= 1 << data.draw(st.integers(0, 7))
    k = max(i for i, start in enumerate(starts) if start <= at)
    out: list[bytes] = []
    with blocks_of(block):
        reader = read_tfrecord(io.BytesIO(bytes(framed)), "f.tfrecord", check_crc=check_crc)
        if at - starts[k] < 12:
            problem = r"a corrupt record length \(its checksum does not match\)"
        elif check_crc:
            problem = r"a corrupt record \(its data checksum does not match\)"
        else:
            out = list(reader)
            changed = at - starts[k] - 12
            if changed < len(records[k]):  # in the data, not its checksum: a changed record
                assert out[k] != records[k]
                out[k] = records[k]
            assert out == records
            return
        with pytest.raises(
            StorageError, match=rf"^f.tfrecord: {problem} at byte offset {starts[k]}"
        ):
            out.extend(reader)
    assert out == records[:k]


@examples(200)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=20), st.integers(1, 300), st.data())
def test_a_cut_file_says_how_much_of_its_last_record_is_missing(
    records: list[bytes], block: int, data: st.DataObject
) -> None:
    framed = tfrecord_bytes(records)
    starts = starts_of(records)
    cut = data.draw(st.integers(0, len(framed) - 1))
    k = max(i for i, start in enumerate(starts) if start <= cut)
    if cut == starts[k]:
        expected_records, problem = records[:k], None  # cut between records: a shorter file
    elif cut - starts[k] < 12:
        expected_records, problem = records[:k], r"a torn record header \(the file ends inside it\)"
    else:
        missing = starts[k + 1] - cut
        expected_records = records[:k]
        problem = (
            rf"a torn record of {len(records[k])} bytes \(the file ends {missing} bytes early\)"
        )
    out: list[bytes] = []
    with blocks_of(block):
        reader = read_tfrecord(io.BytesIO(framed[:cut]), "f.tfrecord")
        if problem is None:
            out.extend(reader)
        else:
            with pytest.raises(
                StorageError, match=rf"^f.tfrecord: {problem} at byte offset {starts[k]}"
            ):
                out.extend(reader)
    assert out == expected_records


@pytest.mark.parametrize("block", [tfrecord.BLOCK, 4096])
@pytest.mark.parametrize(
    ("where", "problem"),
    [
        (8, r"a corrupt record length \(its checksum does not match\)"),  # the length's checksum
        (-2, r"a corrupt record \(its data checksum does not match\)"),  # the data's checksum
    ],
)
def test_a_damaged_checksum_in_the_middle_of_a_file_is_found(
    block: int, where: int, problem: str
) -> None:
    records = [bytes([i % 251]) * (100 + i % 200) for i in range(2000)]
    starts = starts_of(records)
    framed = bytearray(tfrecord_bytes(records))
    framed[(starts[1234] if where > 0 else starts[1235]) + where] ^= 0x10
    out: list[bytes] = []
    with (
        mock.patch.object(tfrecord, "BLOCK", block),
        pytest.raises(StorageError, match=rf"^f.tfrecord: {problem} at byte offset {starts[1234]}"),
    ):
        out.extend(read_tfrecord(io.BytesIO(bytes(framed)), "f.tfrecord"))
    assert out == records[:1234]


def test_without_google_crc32c_records_are_checked_and_only_a_crc_in_python_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A record larger than a block too: its CRC is one call of its own.
    records = [bytes([i]) * i for i in range(100)] + [b"L" * (tfrecord.BLOCK + 1)]
    framed = tfrecord_bytes(records)  # written while google_crc32c is still there
    damaged = []
    for k in (60, 100):
        one = bytearray(framed)
        one[starts_of(records)[k] + 20] ^= 1
        damaged.append(bytes(one))
    monkeypatch.setitem(sys.modules, "google_crc32c", None)  # as if not installed
    monkeypatch.setattr(crc32c, "_CHOSEN", [])
    with caplog.at_level(logging.WARNING, logger=crc32c.__name__):
        assert read(framed) == (records, 101)
        for data in damaged:
            with pytest.raises(StorageError, match=re.escape("a corrupt record (its data check")):
                read(data)
    assert [r.getMessage() for r in caplog.records] == [crc32c.SLOW]


def test_a_record_larger_than_a_block_is_read_and_checked_whole() -> None:
    records = [b"small", bytes(range(256)) * (tfrecord.BLOCK // 256 * 3 + 1), b"after"]
    assert read(tfrecord_bytes(records)) == (records, 3)
    assert read(tfrecord_bytes(records), 1, 5) == ([records[1]], 3)
    framed = bytearray(tfrecord_bytes(records))
    framed[starts_of(records)[1] + 12 + 2 * tfrecord.BLOCK] ^= 4
    with pytest.raises(
        StorageError,
        match=rf"a corrupt record \(its data checksum .* offset {starts_of(records)[1]}",
    ):
        read(bytes(framed))
    assert read(bytes(framed), check_crc=False)[0][2] == b"after"
