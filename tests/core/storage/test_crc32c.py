"""CRC32C: the C code and the pure-Python fallback agree with the standard's check values."""

from __future__ import annotations

import logging
import sys

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.data.tfrecord import masked_crc32c
from vtrain.storage import crc32c as module

BUFFERS = (bytes, bytearray, memoryview)


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


@examples(100)
@given(st.binary(max_size=300), st.integers(0, 300), st.sampled_from(BUFFERS))
def test_a_running_value_continues_over_any_buffer(data: bytes, cut: int, kind: type) -> None:
    # As zlib.crc32 does: the CRC of the whole is the CRC of the second part, from the first's.
    head, tail = kind(data[:cut]), kind(data[cut:])
    for crc in (module.crc32c, module._python_crc32c):
        assert crc(tail, crc(head)) == module.crc32c(data)


def test_a_buffer_larger_than_a_slice_is_read_whole() -> None:
    import google_crc32c

    data = bytes(range(256)) * (module.SLICE * 2 // 256 + 3)
    assert module.crc32c(memoryview(data)) == google_crc32c.value(data)


def test_mask_is_tensorflows() -> None:
    # TensorFlow's crc32c::Mask: rotate right by 15, add 0xa282ead8.
    crc = 0xE3069283
    expected = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert masked_crc32c(b"123456789") == expected


def test_the_c_code_is_used_as_it_is_when_installed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import google_crc32c

    monkeypatch.setattr(module, "_CHOSEN", [])
    with caplog.at_level(logging.WARNING, logger=module.__name__):
        assert module.bytes_crc32c() is google_crc32c.value  # no Python frame per record
        assert module.crc32c(b"123456789") == 0xE3069283
        assert module.implementation() == "google-crc32c (C)"
    assert caplog.records == []


def test_the_python_fallback_says_so_once_in_the_log(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "google_crc32c", None)  # as if not installed
    monkeypatch.setattr(module, "_CHOSEN", [])
    with caplog.at_level(logging.WARNING, logger=module.__name__):
        assert module.crc32c(b"123456789") == 0xE3069283
        assert module.bytes_crc32c()(b"123456789") == 0xE3069283
        for _ in range(3):
            module.crc32c(b"x")
        assert module.implementation() == "pure Python"
    assert [r.getMessage() for r in caplog.records] == [module.SLOW]
    assert caplog.records[0].name == "vtrain.storage.crc32c"  # a child of the vtrain logger
    assert 'pip install "vtrain[data]"' in module.SLOW
