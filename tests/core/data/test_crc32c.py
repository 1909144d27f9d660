"""CRC32C: the C code and the pure-Python fallback agree with the standard's check values."""

from __future__ import annotations

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.data import crc32c as module


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"", 0), (b"123456789", 0xE3069283), (bytes(32), 0x8A9136AA), (b"\xff" * 32, 0x62A8AB43)],
)
def test_check_values(data: bytes, expected: int) -> None:
    assert module.crc32c(data) == expected
    assert module._python_crc32c(data) == expected


@examples(200)
@given(st.binary(max_size=300))
def test_python_fallback_matches_google_crc32c(data: bytes) -> None:
    import google_crc32c

    assert module._python_crc32c(data) == google_crc32c.value(data)


def test_mask_is_tensorflows() -> None:
    # TensorFlow's crc32c::Mask: rotate right by 15, add 0xa282ead8.
    crc = 0xE3069283
    expected = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert module.masked_crc32c(b"123456789") == expected
