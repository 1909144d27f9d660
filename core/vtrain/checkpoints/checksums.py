"""The checksums a manifest records: CRC-32 on disks and mounts, CRC32C on Cloud Storage.

CRC-32 (zlib) needs nothing beyond the standard library. On gs:// the manifest
records CRC32C instead, the checksum Cloud Storage itself keeps for every
object: the server checks each upload against it, and a restore compares the
server's value with the manifest before downloading a byte. `google-crc32c`
(in the gcs extra, with the storage client) computes it at about 9 GB/s.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vtrain.errors import MissingExtraError

if TYPE_CHECKING:
    from typing_extensions import Buffer

CRC32 = "crc32"
CRC32C = "crc32c"
ALGORITHMS = (CRC32, CRC32C)
LABELS = {CRC32: "CRC-32", CRC32C: "CRC32C"}
SLICE = 1 << 20
SLICE = 1 << 20

Update = Callable[["Buffer", int], int]
"""(chunk, running value) -> new value."""


def _crc32c() -> Any:
    try:
        import google_crc32c
    except ImportError as e:
        raise MissingExtraError("CRC32C checksums", "gcs", module="google_crc32c") from e
    return google_crc32c


def updater(algorithm: str) -> Update:
    """The running-checksum function of an algorithm."""
    if algorithm == CRC32C:
        extend = _crc32c().extend

        def update(chunk: Buffer, value: int) -> int:
            if type(chunk) is bytes:
                return int(extend(value, chunk))
            # It takes `bytes` only (no memoryview, bytearray or mmap): copy in slices that
            # stay in the CPU cache, which costs less than the CRC itself.
            view = memoryview(chunk).cast("B")
            for start in range(0, len(view), SLICE):
                value = int(extend(value, view[start : start + SLICE].tobytes()))
            return value

        return update
    return lambda chunk, value: zlib.crc32(chunk, value)


def checksum(algorithm: str, data: Buffer) -> int:
    """The checksum of a whole buffer."""
    return updater(algorithm)(data, 0)
