"""CSV with a header: dicts per row; torn or malformed rows named by file and byte offset."""

from __future__ import annotations

import io

import pytest

from vtrain import StorageError
from vtrain.data.csv_records import read_csv


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
