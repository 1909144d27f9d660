"""JSON Lines: records in order, blank lines skipped, bad lines named by file and byte offset."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from vtrain import StorageError
from vtrain.data.cursor import Cursor
from vtrain.data.jsonl import read_jsonl, read_jsonl_at


def read(data: bytes, first: int = 0, step: int = 1) -> tuple[list[object], int]:
    gen = read_jsonl(io.BytesIO(data), "f.jsonl", lambda: io.BytesIO(data), first, step)
    out: list[object] = []
    while True:
        try:
            out.append(next(gen))
        except StopIteration as stop:
            return out, stop.value


def test_records_and_line_count() -> None:
    data = b'{"a": 1}\n\n{"a": 2}\r\n{"a": 3}'
    assert read(data) == ([{"a": 1}, {"a": 2}, {"a": 3}], 4)
    # Lines are counted for the stride, blank ones too: line 1 is blank, so reader 1 of 2
    # gets one record; across readers each record is still read exactly once.
    assert read(data, 1, 2)[0] == [{"a": 3}]
    assert read(data, 0, 2) == ([{"a": 1}, {"a": 2}], 4)
    assert read(b"") == ([], 0)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b'{"a": 1}\n{"a": \n', r"f.jsonl: line 2 is not JSON: .* at byte offset 9"),
        (
            b'{"a": 1}\n{"a": 2}\n{"a"',
            r"line 3 is not JSON \(the file ends inside it\).* at byte "
            r"offset 18",
        ),
        (b'{"a": 1}\n{"\xff": 2}\n', r"f.jsonl: line 2 is not UTF-8 at byte offset 11"),
    ],
)
def test_bad_lines_name_the_file_and_offset(data: bytes, match: str) -> None:
    with pytest.raises(StorageError, match=match):
        read(data)


def test_a_big_bad_file_reports_the_exact_offset(tmp_path: Path) -> None:
    good = b'{"k": "' + b"x" * 1000 + b'"}\n'
    data = good * 20000 + b"{oops}\n" + good
    with pytest.raises(
        StorageError, match=f"line 20001 is not JSON: .* at byte offset {len(good) * 20000}"
    ):
        read(data)


def test_a_cursor_reads_on_from_a_byte_offset_and_moves_past_each_record() -> None:
    data = '{"a": 1}\n\n{"a": "ü"}\n{"a": 3}\n'.encode()
    second = data.index(b"\n\n") + 2
    cursor = Cursor(offset=second, records=2)
    gen = read_jsonl_at(io.BytesIO(data), "f.jsonl", lambda: io.BytesIO(data), cursor)
    assert next(gen) == {"a": "ü"}
    assert (cursor.offset, cursor.records, cursor.count) == (data.index(b'{"a": 3}'), 3, 1)
    assert list(gen) == [{"a": 3}] and (cursor.offset, cursor.records) == (len(data), 4)


def test_a_bad_line_after_an_offset_names_its_line_and_offset() -> None:
    data = b'{"a": 1}\n{"a": 2}\n{oops}\n'
    cursor = Cursor(offset=9, records=1)
    with pytest.raises(StorageError, match=r"line 3 is not JSON: .* at byte offset 18"):
        list(read_jsonl_at(io.BytesIO(data), "f.jsonl", lambda: io.BytesIO(data), cursor))
