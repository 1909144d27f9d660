"""CRC32C, the checksum Cloud Storage keeps and TFRecord frames: google_crc32c's C code when
installed, else Python. The one chooser: checkpoints and the TFRecord reader alike.

google-crc32c (about 20 GB/s) comes with every extra that reads data: the
framework extras, `data`, and `gcs`. The pure-Python fallback gives the same
values, at a few MB/s: it says so once, in the log, the first time it is used.
`implementation()` names the one that runs (`vtrain info` shows it).
`records(check_crc=False)` skips the data checksum of TFRecord files.
"""

from __future__ import annotations

from collections.abc import Callable

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from typing_extensions import Buffer

_POLYNOMIAL = 0x82F63B78  # Castagnoli, reflected
_TABLE: list[int] = []
# google_crc32c takes `bytes` only (no memoryview, bytearray or mmap): other buffers are
# copied in slices that stay in the CPU cache, which costs less than the CRC itself.
SLICE = 1 << 20
GOOGLE = "google-crc32c (C)"
PYTHON = "pure Python"
SLOW = (
    "google-crc32c is not installed (or has no C code here): CRC32C checksums (gs:// "
    "checkpoints, TFRecord records) are computed in pure Python, at a few MB/s instead of "
    'GB/s: pip install "vtrain[data]" (or google-crc32c)'
)


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


def _c_module() -> Any | None:
    """google_crc32c, when it is installed with its C code (its own fallback is Python too)."""
    try:
        import google_crc32c  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    return google_crc32c if google_crc32c.implementation == "c" else None


class _Chosen:
    """The implementation chosen at first use: its name, and its two entry points."""

    def __init__(self) -> None:
        module = _c_module()
        if module is None:
            from vtrain.log import logger  # lazily: this module is on the records' start-up path

            logger(__name__).warning(SLOW)
            self.name = PYTHON
            self.crc: Callable[[Buffer, int], int] = _python_crc32c
            self.bytes_crc: Callable[[bytes], int] = _python_crc32c
            return
        extend = module.extend

        def c_crc32c(data: Buffer, value: int = 0) -> int:
            if type(data) is bytes:
                return int(extend(value, data))
            view = memoryview(data).cast("B")
            for start in range(0, len(view), SLICE):
                value = int(extend(value, view[start : start + SLICE].tobytes()))
            return value

        self.name, self.crc, self.bytes_crc = GOOGLE, c_crc32c, module.value


# Chosen at first use, not at import: the import costs a shared library.
_CHOSEN: list[_Chosen] = []


def _chosen() -> _Chosen:
    if not _CHOSEN:
        _CHOSEN.append(_Chosen())
    return _CHOSEN[0]


def crc32c(data: Buffer, value: int = 0) -> int:
    """The CRC32C of `data`, continuing from `value` (the CRC32C so far), as `zlib.crc32` does."""
    return _chosen().crc(data, value)


def bytes_crc32c() -> Callable[[bytes], int]:
    """The fastest function from one `bytes` to its CRC32C: google_crc32c's C code itself.

    For many short buffers (a record each): a Python frame per call costs more than the
    CRC of a few hundred bytes.
    """
    return _chosen().bytes_crc


def implementation() -> str:
    """Which CRC32C runs here: "google-crc32c (C)" or "pure Python" (`vtrain info` says it)."""
    return _chosen().name
