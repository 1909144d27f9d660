"""TFRecord framing: records back byte for byte; a flipped byte or a cut names file and offset."""

from __future__ import annotations

import io

import pytest
from data_files import tfrecord_bytes

from vtrain import StorageError
from vtrain.data.cursor import Cursor
from vtrain.data.tfrecord import read_tfrecord, read_tfrecord_at

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
