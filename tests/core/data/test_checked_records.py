"""The C check of a TFRecord block's data checksums (_checked_records.c), against one CRC per
record: the first bad record it keeps, for records of any length and any stride; and for
`ends`, `skip` and `step` anywhere in C's range, a clear refusal, never a read past the block.

The reader's own tests (test_tfrecord.py) run through it and through the Python check alike.
"""

from __future__ import annotations

import io
import sys
from types import SimpleNamespace
from unittest import mock

import pytest
from c_module import USED_HERE
from data_files import starts_of, tfrecord_bytes
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.data import tfrecord
from vtrain.data.tfrecord import read_tfrecord
from vtrain.storage.crc32c import crc32c

MODULE = tfrecord._native()
NATIVE = MODULE.first_bad if MODULE is not None else None


def reference_first_bad(block: bytes, ends: list[int], skip: int, step: int) -> int | None:
    """What `first_bad` must answer, one record at a time through google_crc32c."""
    starts = [0, *ends[:-1]]
    for j, at in enumerate(range(skip, len(ends), step)):
        start, end = starts[at], ends[at]
        if tfrecord.masked_crc32c(block[start + 12 : end - 4]) != int.from_bytes(
            block[end - 4 : end], "little"
        ):
            return j
    return None


# Lengths around the C check's 8-byte words, and long ones that keep its lanes apart.
LENGTHS = st.integers(0, 20) | st.integers(0, 3000)


@pytest.mark.skipif(
    not USED_HERE,
    reason="built only where a C compiler is, and used only with the x86-64 CRC32C instruction",
)
def test_the_c_block_check_is_built_and_used_where_a_compiler_is() -> None:
    # The editable install built it (hatch_build.py), and the reader takes it.
    assert MODULE is not None and MODULE.__name__ == "vtrain.data._checked_records"


@pytest.mark.skipif(MODULE is None, reason="not built here: see test_wheel")
def test_the_reader_checks_and_takes_its_crcs_through_the_module() -> None:
    # The reader's tests hand it the module or none (test_tfrecord.py's fixture): this says
    # that what it is handed is what it uses, for the blocks and for the headers' CRCs.
    assert MODULE is not None
    calls: list[str] = []

    def block(*args: object) -> int | None:
        calls.append("block")
        return MODULE.first_bad(*args)

    def crc(*args: object) -> int:
        calls.append("crc")
        return MODULE.crc32c(*args)

    records = [b"one", b"two", b"three"]
    with mock.patch.object(
        tfrecord, "_native", lambda: SimpleNamespace(first_bad=block, crc32c=crc)
    ):
        assert list(read_tfrecord(io.BytesIO(tfrecord_bytes(records)), "f.tfrecord")) == records
    assert sorted(set(calls)) == ["block", "crc"]


@pytest.mark.skipif(NATIVE is None, reason="not built here: see test_wheel")
@examples(500)
@given(
    st.lists(LENGTHS, max_size=40),
    st.integers(0, 3),
    st.integers(1, 3),
    st.sets(st.integers(0, 39), max_size=4),
    st.data(),
)
def test_the_c_block_check_finds_the_first_bad_record_it_keeps(
    lengths: list[int], skip: int, step: int, damaged: set[int], data: st.DataObject
) -> None:
    # Records of any length, several of them damaged (in the data or in the stored checksum),
    # in any order of lengths: the first damaged record among those kept, or None.
    block = bytearray(tfrecord_bytes([bytes([n % 251]) * n for n in lengths]))
    ends = starts_of([b"x" * n for n in lengths])[1:]
    for k in damaged & set(range(len(lengths))):
        start = ends[k - 1] if k else 0
        block[data.draw(st.integers(start + 12, ends[k] - 1))] ^= 1 << data.draw(st.integers(0, 7))
    assert NATIVE is not None
    assert NATIVE(bytes(block), ends, skip, step) == reference_first_bad(
        bytes(block), ends, skip, step
    )


SIZE_MAX = sys.maxsize  # Py_ssize_t's largest: the C code's integers
EXTREMES = st.sampled_from([-SIZE_MAX - 1, -SIZE_MAX + 5, -1, SIZE_MAX - 3, SIZE_MAX])


@pytest.mark.skipif(NATIVE is None, reason="not built here: see test_wheel")
@pytest.mark.parametrize(
    ("ends", "skip", "step"),
    [
        ([20, -SIZE_MAX - 1], 1, 1),  # end - start would overflow to a large size
        ([20, -SIZE_MAX + 4], 1, 2),
        ([20, 40, SIZE_MAX], 2, 1),
        ([41], 0, 1),  # past the block
        ([20, 15], 0, 1),  # ends before it starts
        ([10], 0, 1),  # shorter than a header and a checksum
        ([20], -1, 1),
        ([20], 0, 0),
    ],
)
def test_the_c_block_check_refuses_the_worst_ends(ends: list[int], skip: int, step: int) -> None:
    assert NATIVE is not None
    with pytest.raises(ValueError, match="not a whole record|skip must be"):
        NATIVE(tfrecord_bytes([b"four", b"more"]), ends, skip, step)


@pytest.mark.skipif(NATIVE is None, reason="not built here: see test_wheel")
@examples(500)
@given(
    st.lists(st.integers(0, 60), max_size=6),
    st.integers(-2, 8) | EXTREMES,
    st.integers(-1, 8) | EXTREMES,
    st.data(),
)
def test_the_c_block_check_refuses_what_is_not_records_of_the_block_and_never_reads_past_it(
    lengths: list[int], skip: int, step: int, data: st.DataObject
) -> None:
    # Any `ends`, `skip` and `step` C integers can hold, however far from a real block's:
    # an answer where every kept record lies whole in the block, else ValueError. Never a
    # read outside the block (a crash of the test process), never a record left unchecked.
    block = bytearray(tfrecord_bytes([bytes([7]) * n for n in lengths]))
    ends = starts_of([b"x" * n for n in lengths])[1:]
    if block and data.draw(st.booleans()):  # a damaged record, to be found
        block[data.draw(st.integers(0, len(block) - 1))] ^= 0x20
    if data.draw(st.booleans()):  # some ends anywhere
        for i in data.draw(st.sets(st.integers(0, len(ends)), max_size=3)):
            ends[i:i] = [data.draw(st.integers(-2, len(block) + 2) | EXTREMES)]
    kept = range(skip, len(ends), step) if skip >= 0 and step >= 1 else range(0)
    whole = skip >= 0 and step >= 1
    for at in kept:
        start, end = ends[at - 1] if at else 0, ends[at]
        whole = whole and 0 <= start <= end <= len(block) and end - start >= 16
    assert NATIVE is not None
    if not whole:
        with pytest.raises(ValueError, match="not a whole record|skip must be"):
            NATIVE(bytes(block), ends, skip, step)
    else:
        expected = reference_first_bad(bytes(block), ends, skip, step)
        assert NATIVE(bytes(block), ends, skip, step) == expected


@pytest.mark.skipif(MODULE is None, reason="not built here: see test_wheel")
@examples(300)
@given(
    st.binary(max_size=300) | st.integers(0, 200_000).map(lambda n: bytes(range(256)) * (n // 256)),
    st.integers(0, 2**32 - 1),
    st.sampled_from([bytes, bytearray, memoryview]),
)
def test_the_c_crc32c_is_google_crc32c_s_for_any_buffer_and_start(
    data: bytes, value: int, kind: type
) -> None:
    # Lengths around its 8-, 4-, 2- and 1-byte steps, and long ones (the GIL released).
    assert MODULE is not None
    assert MODULE.crc32c(kind(data), value) == crc32c(data, value)
    assert MODULE.crc32c(data) == crc32c(data)
