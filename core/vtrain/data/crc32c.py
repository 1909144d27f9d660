"""CRC32C and TFRecord's masked form: google_crc32c's C code when installed, else pure Python.

The `gcs` extra installs google-crc32c; the fallback is correct but slow (a few
MB/s), which is why `records(check_crc=False)` exists.
"""

from __future__ import annotations

from collections.abc import Callable

_MASK_DELTA = 0xA282EAD8
_POLYNOMIAL = 0x82F63B78  # Castagnoli, reflected
_TABLE: list[int] = []


def _python_crc32c(data: bytes) -> int:
    if not _TABLE:
        for byte in range(256):
            crc = byte
            for _ in range(8):
                crc = (crc >> 1) ^ _POLYNOMIAL if crc & 1 else crc >> 1
            _TABLE.append(crc)
    table, crc = _TABLE, 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _pick() -> Callable[[bytes], int]:
    try:
        import google_crc32c  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return _python_crc32c
    value: Callable[[bytes], int] = google_crc32c.value
    return value


_CHOSEN: list[Callable[[bytes], int]] = []


def crc32c(data: bytes) -> int:
    """The CRC32C of `data`."""
    if not _CHOSEN:  # chosen at first use, not at import: the import costs a shared library
        _CHOSEN.append(_pick())
    return _CHOSEN[0](data)


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC32C: rotated right by 15 bits, plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF
