"""TFRecord framing, read in Python: no TensorFlow needed.

Each record is: uint64 length, masked CRC32C of those 8 bytes, the data, masked
CRC32C of the data (all little-endian). Like TensorFlow's own reader
(tsl/lib/io/record_reader.cc), this checks both checksums of every record it
returns, and only the length's of a record it skips. `check_crc=False` skips the
data's checksum: the pure-Python CRC32C (without google-crc32c) is slow.
"""

from __future__ import annotations

import struct
from collections.abc import Generator
from typing import BinaryIO

from vtrain.data.positions import damaged
from vtrain.storage.crc32c import crc32c

_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")
_MASK_DELTA = 0xA282EAD8


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC32C: rotated right by 15 bits, plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def read_tfrecord(
    stream: BinaryIO, where: str, first: int = 0, step: int = 1, *, check_crc: bool = True
) -> Generator[bytes, None, int]:
    """Yield records `first`, `first + step` … as bytes; return how many records the file has."""
    read, header_size = stream.read, _HEADER.size
    unpack_header, unpack_footer = _HEADER.unpack, _FOOTER.unpack
    offset = index = 0
    keep = first
    while True:
        header = read(header_size)
        if not header:
            return index
        if len(header) < header_size:
            raise damaged(where, offset, "a torn record header (the file ends inside it)")
        length, length_crc = unpack_header(header)
        if masked_crc32c(header[:8]) != length_crc:
            raise damaged(
                where,
                offset,
                "a corrupt record length (its checksum does not match)",
                hint="a damaged file, or not a TFRecord file",
            )
        data, footer = read(length), read(4)
        if len(data) < length or len(footer) < 4:
            missing = length + 4 - len(data) - len(footer)
            raise damaged(
                where,
                offset,
                f"a torn record of {length} bytes (the file ends {missing} bytes early)",
            )
        if index == keep:
            if check_crc and masked_crc32c(data) != unpack_footer(footer)[0]:
                raise damaged(where, offset, "a corrupt record (its data checksum does not match)")
            yield data
            keep += step
        offset += header_size + length + 4
        index += 1
