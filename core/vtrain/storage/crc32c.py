"""CRC32C, the checksum Cloud Storage keeps: google_crc32c's C code when installed, else Python.

The `gcs` extra installs google-crc32c (about 9 GB/s). The pure-Python fallback
gives the same values but slowly (a few MB/s): enough to check a TFRecord
without the extra (`records(check_crc=False)` skips it), too slow for large
checkpoints, which on gs:// have the extra anyway (the storage client needs it).
"""

from __future__ import annotations

from collections.abc import Callable

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing_extensions import Buffer

_POLYNOMIAL = 0x82F63B78  # Castagnoli, reflected
_TABLE: list[int] = []
# google_crc32c takes `bytes` only (no memoryview, bytearray or mmap): other buffers are
# copied in slices that stay in the CPU cache, which costs less than the CRC itself.
SLICE = 1 << 20


def _python_crc32c(data: Buffer, value: int = 0) -> int:
    if not _TABLE:
        for byte in range(256):
            crc = byte
            for _ in range(8):
                crc = (crc >> 1) ^ _POLYNOMIAL if crc & 1 else crc >> 1
            _TABLE.append(crc)
    table, crc = _TABLE, value ^ 0xFFFFFFFF
    for byte in memoryview(data).cast("B"):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _c_crc32c() -> Callable[[Buffer, int], int] | None:
    try:
        import google_crc32c  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    extend = google_crc32c.extend

    def c_crc32c(data: Buffer, value: int = 0) -> int:
        if type(data) is bytes:
            return int(extend(value, data))
        view = memoryview(data).cast("B")
        for start in range(0, len(view), SLICE):
            value = int(extend(value, view[start : start + SLICE].tobytes()))
        return value

    return c_crc32c


_CHOSEN: list[Callable[[Buffer, int], int]] = []


def crc32c(data: Buffer, value: int = 0) -> int:
    """The CRC32C of `data`, continuing from `value` (the CRC32C so far), as `zlib.crc32` does."""
    if not _CHOSEN:  # chosen at first use, not at import: the import costs a shared library
        _CHOSEN.append(_c_crc32c() or _python_crc32c)
    return _CHOSEN[0](data, value)
