"""CSV with a header: dicts per row; torn or malformed rows named by file and byte offset."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import pytest

from vtrain import StorageError
from vtrain.data import csv_records
from vtrain.data.csv_records import read_csv, read_csv_at
from vtrain.data.cursor import Cursor


@pytest.fixture
def csv_default_limit() -> Iterator[None]:
    """The csv module's own field limit (128 Ki) for the test, and whatever it was after."""
    before = csv.field_size_limit(128 << 10)
    yield
    csv.field_size_limit(before)


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


def test_a_long_field_is_read(csv_default_limit: None) -> None:
    long = "x" * 200_000
    data = f'a,b\n1,{long}\n2,"{long}\n{long}"\n'.encode()
    assert read(data) == ([{"a": "1", "b": long}, {"a": "2", "b": f"{long}\n{long}"}], 2)


def test_a_field_over_the_limit_is_refused_as_too_long(
    csv_default_limit: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(csv_records, "FIELD_LIMIT", 1 << 18)
    data = b'a,b\n1,2\n3,"' + b"x" * (1 << 19)  # a quote never closed
    with pytest.raises(
        StorageError,
        match=r"^f.csv: line 3 has a field longer than 262144 characters, at byte offset 8\. "
        r"Hint: a quote that is never closed makes the rest of the file one field; if the field "
        r"is real, raise csv.field_size_limit\(\) before reading",
    ):
        read(data)


@pytest.mark.parametrize(
    ("header", "match"),
    [
        (b"a,a", r"^f.csv: the header names column 'a' more than once: columns 1 and 2\. Hint: "),
        (b"x,a,y,a,a", r"column 'a' more than once: columns 2, 4 and 5\. Hint: rename all"),
        (b",b,", r"column '' more than once: columns 1 and 3\. Hint: rename all but one"),
    ],
)
def test_a_column_named_twice_is_refused_not_dropped(header: bytes, match: str) -> None:
    with pytest.raises(StorageError, match=match) as caught:
        read(header + b"\n1,2,3,4,5\n")
    assert "\n" not in str(caught.value)


def test_a_byte_order_mark_is_no_part_of_the_first_name() -> None:
    for header in (b"a,b", b'"a",b'):
        data = b"\xef\xbb\xbf" + header + b"\r\n1,2\r\n3,4\r\n"
        assert read(data) == ([{"a": "1", "b": "2"}, {"a": "3", "b": "4"}], 2)
        # Offsets count the mark's three bytes: a cursor resumes at the right row.
        cursor = Cursor()
        gen = read_csv_at(io.BytesIO(data), "f.csv", lambda d=data: io.BytesIO(d), cursor)
        assert next(gen) == {"a": "1", "b": "2"} and cursor.offset == data.index(b"3,4")
        resumed = read_csv_at(io.BytesIO(data), "f.csv", lambda d=data: io.BytesIO(d), cursor)
        assert list(resumed) == [{"a": "3", "b": "4"}] and cursor.offset == len(data)
