"""CSV with a header: dicts per row; torn or malformed rows named by file and byte offset."""

from __future__ import annotations

import io

import pytest

from vtrain import StorageError
from vtrain.data.csv_records import read_csv, read_csv_at
from vtrain.data.cursor import Cursor


def read(data: bytes, first: int = 0, step: int = 1) -> tuple[list[dict[str, str]], int]:
    gen = read_csv(io.BytesIO(data), "f.csv", lambda: io.BytesIO(data), first, step)
    out: list[dict[str, str]] = []
    while True:
        try:
            out.append(next(gen))
        except StopIteration as stop:
            return out, stop.value


def test_rows_become_dicts() -> None:
    data = b'x,y\n1,"a,b"\n\n2,"multi\nline"\r\n3,c'
    rows = [{"x": "1", "y": "a,b"}, {"x": "2", "y": "multi\nline"}, {"x": "3", "y": "c"}]
    assert read(data) == (rows, 3)
    assert read(data, 1, 2) == ([rows[1]], 3)
    assert read(b"") == ([], 0) and read(b"x,y\n") == ([], 0)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"x,y\n1,2\n3", r"f.csv: the row on line 3 has 1 fields, the header 2 at byte offset 8"),
        (b'x,y\n1,2\n3,"torn', r"f.csv: line \d is not CSV: .* at byte offset 8"),
        (b"x,y\n1,2\n\xff,3\n", r"f.csv: line 3 is not UTF-8 at byte offset 8"),
    ],
)
def test_bad_rows_name_the_file_and_offset(data: bytes, match: str) -> None:
    with pytest.raises(StorageError, match=match):
        read(data)


def test_a_cursor_reads_the_header_then_rows_from_its_offset() -> None:
    data = 'x,y\r\n1,"a\r\nb"\r\n\r\n2,ü\r\n3,c\r\n'.encode()
    cursor = Cursor(offset=data.index(b"2,"), records=1)
    gen = read_csv_at(io.BytesIO(data), "f.csv", lambda: io.BytesIO(data), cursor)
    assert next(gen) == {"x": "2", "y": "ü"}
    assert (cursor.offset, cursor.records, cursor.count) == (data.index(b"3,c"), 2, 1)
    assert list(gen) == [{"x": "3", "y": "c"}] and cursor.offset == len(data)


@pytest.mark.parametrize("offset", [0, 8])
def test_a_bad_row_after_a_blank_line_names_its_line_and_offset(offset: int) -> None:
    data = b"x,y\n1,2\n\n3\n"
    cursor = Cursor(offset=offset, records=1 if offset else 0)
    with pytest.raises(
        StorageError, match=r"f.csv: the row on line 4 has 1 fields, the header 2 at byte offset 9"
    ):
        list(read_csv_at(io.BytesIO(data), "f.csv", lambda: io.BytesIO(data), cursor))
