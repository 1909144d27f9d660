"""The checksums a manifest records: CRC-32 on disks and mounts, CRC32C on Cloud Storage.

CRC-32 (zlib) needs nothing beyond the standard library. On gs:// the manifest
records CRC32C instead, the checksum Cloud Storage itself keeps for every
object: the server checks each upload against it, and a restore compares the
server's value with the manifest before downloading a byte (see
`vtrain.storage.crc32c`).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from vtrain.storage.crc32c import crc32c

if TYPE_CHECKING:
    from typing_extensions import Buffer

CRC32 = "crc32"
CRC32C = "crc32c"
ALGORITHMS = (CRC32, CRC32C)
LABELS = {CRC32: "CRC-32", CRC32C: "CRC32C"}

Update = Callable[["Buffer", int], int]
"""(chunk, running value) -> new value."""


def updater(algorithm: str) -> Update:
    """The running-checksum function of an algorithm."""
    return crc32c if algorithm == CRC32C else zlib.crc32


def checksum(algorithm: str, data: Buffer) -> int:
    """The checksum of a whole buffer."""
    return updater(algorithm)(data, 0)
