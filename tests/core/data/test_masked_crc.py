"""A block of TFRecord checksums checked with one CRC: all good in one call, the first bad named."""

from __future__ import annotations

import struct

import google_crc32c
import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.data import masked_crc
from vtrain.data.masked_crc import FEW, RESET, first_mismatch, mask
from vtrain.storage import crc32c

CASTAGNOLI = 0x82F63B78  # reflected


def unstep(register: int) -> int:
    """The register before one step of the reflected CRC with no input bit."""
    if register & 0x80000000:  # the step XORed in the polynomial: the bit shifted out was 1
        return (((register ^ CASTAGNOLI) << 1) | 1) & 0xFFFFFFFF
    return register << 1


def test_reset_is_derived_from_the_polynomial() -> None:
    register = 0xFFFFFFFF
    for _ in range(32):
        register = unstep(register)
    assert ~register & 0xFFFFFFFF == RESET


@examples(100)
@given(st.binary(max_size=300))
def test_a_message_then_its_crc_xor_reset_has_crc_0(data: bytes) -> None:
    for crc in (google_crc32c.value, crc32c._python_crc32c):
        word = (crc(data) ^ RESET).to_bytes(4, "little")
        assert crc(data + word) == 0
        assert crc(data + word + data + word) == 0  # the register is back at its start


def stored(data: bytes) -> bytes:
    return struct.pack("<I", mask(google_crc32c.value(data)))


@examples(100)
@given(st.lists(st.binary(max_size=100), min_size=FEW, max_size=300))
def test_a_block_that_matches_costs_one_crc_a_chunk(datas: list[bytes]) -> None:
    calls: list[tuple[int, int]] = []

    def counted(data: bytes, value: int) -> int:
        calls.append((len(data), value))
        return int(google_crc32c.extend(value, data))

    values = tuple(v for d in datas for v in (d, stored(d)))
    assert first_mismatch(values, counted) is None
    chunks = [datas[i : i + masked_crc.CHUNK] for i in range(0, len(datas), masked_crc.CHUNK)]
    assert [size for size, _ in calls] == [sum(map(len, c)) + 4 * len(c) for c in chunks]
    assert all(value == 0 for _, value in calls)  # each chunk ends with the register at its start


@pytest.mark.parametrize("chunk", [1, 3, 128])
@examples(100)
@given(st.lists(st.binary(max_size=60), min_size=FEW, max_size=100), st.data())
def test_a_flipped_bit_is_caught_whatever_the_chunk(
    chunk: int, datas: list[bytes], data: st.DataObject
) -> None:
    # Any one bit of the data or of a stored checksum, in any chunk: the block's CRC is not 0,
    # and the record it lies in is the one named.
    values = [v for d in datas for v in (d, stored(d))]
    i = data.draw(st.integers(0, len(values) - 1).filter(lambda i: len(values[i]) > 0))
    bit = data.draw(st.integers(0, 8 * len(values[i]) - 1))
    flipped = bytearray(values[i])
    flipped[bit // 8] ^= 1 << (bit % 8)
    values[i] = bytes(flipped)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(masked_crc, "CHUNK", chunk)
        assert first_mismatch(tuple(values), crc32c.crc32c) == i // 2


@examples(200)
@given(st.lists(st.binary(max_size=60), min_size=1, max_size=100), st.data())
def test_the_first_record_whose_checksum_differs_is_named(
    datas: list[bytes], data: st.DataObject
) -> None:
    values = [v for d in datas for v in (d, stored(d))]
    bad = data.draw(st.sets(st.integers(0, len(datas) - 1), max_size=3))
    for i in bad:
        flip = data.draw(st.integers(1, 0xFFFFFFFF))
        values[2 * i + 1] = struct.pack("<I", struct.unpack("<I", values[2 * i + 1])[0] ^ flip)
    assert first_mismatch(tuple(values), crc32c.crc32c) == min(bad, default=None)
