"""TFRecord framing, read in Python: no TensorFlow needed.

Each record is: uint64 length, masked CRC32C of those 8 bytes, the data, masked
CRC32C of the data (all little-endian). Like TensorFlow's own reader
(tsl/lib/io/record_reader.cc), this checks both checksums of every record it
returns, and only the length's of a record it skips. `check_crc=False` skips the
data's checksum: the pure-Python CRC32C (without google-crc32c) is slow.
"""

from __future__ import annotations

import struct
from collections.abc import Generator, Iterator
from typing import BinaryIO

from vtrain.data.cursor import Cursor
from vtrain.data.positions import damaged
from vtrain.storage.crc32c import bytes_crc32c, crc32c

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
    cursor = Cursor(skip=first, step=step)
    yield from read_tfrecord_at(stream, where, cursor, check_crc=check_crc)
    return cursor.records


def read_tfrecord_at(
    stream: BinaryIO, where: str, cursor: Cursor, *, check_crc: bool = True
) -> Iterator[bytes]:
    """Yield the records `cursor` keeps, from its offset on, moving it past each one."""
    if cursor.offset:
        stream.seek(cursor.offset)
    read, header_size = stream.read, _HEADER.size
    unpack_header, unpack_footer = _HEADER.unpack, _FOOTER.unpack
    # masked_crc32c, inlined: per record, Python frames would cost more than the checksums.
    crc, delta = bytes_crc32c(), _MASK_DELTA
    offset, records, skip, step, count = (
        cursor.offset,
        cursor.records,
        cursor.skip,
        cursor.step,
        cursor.count,
    )
    while True:
        header = read(header_size)
        if not header:
            break
        if len(header) < header_size:
            raise damaged(where, offset, "a torn record header (the file ends inside it)")
        length, length_crc = unpack_header(header)
        c = crc(header[:8])
        if ((c >> 15) | ((c & 0x7FFF) << 17)) != (length_crc - delta) & 0xFFFFFFFF:
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
        records += 1
        end = offset + header_size + length + 4
        if skip:
            skip -= 1
        else:
            skip = step - 1
            if check_crc:
                c = crc(data)
                if ((c >> 15) | ((c & 0x7FFF) << 17)) != (
                    unpack_footer(footer)[0] - delta
                ) & 0xFFFFFFFF:
                    raise damaged(
                        where, offset, "a corrupt record (its data checksum does not match)"
                    )
            count += 1
            cursor.offset, cursor.records, cursor.skip, cursor.count = end, records, skip, count
            yield data
        offset = end
    cursor.offset, cursor.records, cursor.skip, cursor.count = offset, records, skip, count
