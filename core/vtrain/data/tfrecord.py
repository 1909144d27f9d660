"""TFRecord framing, read in Python: no TensorFlow needed.

Each record is: uint64 length, masked CRC32C of those 8 bytes, the data, masked
CRC32C of the data (all little-endian). Like TensorFlow's own reader
(tsl/lib/io/record_reader.cc), this checks both checksums of every record it
returns, and only the length's of a record it skips. `check_crc=False` skips the
data's checksum.

Records are often a few hundred bytes, so the interpreter's steps per record
cost more than the bytes: the reader reads a block at a time and walks its
headers, the only step per record; one `struct` call then slices out every
record of the block, and every kept record's data checksum is checked with one
CRC of the whole, through `vtrain.storage.crc32c` (masked_crc.py). A header's
checksum is taken once per distinct header: most files have few record lengths.
A record larger than a block is read alone, in one piece, once the file is known to
hold all of it (a torn header can claim any length).
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable, Generator, Iterator
from operator import sub
from typing import BinaryIO

from vtrain.data.cursor import Cursor
from vtrain.data.masked_crc import first_mismatch, mask
from vtrain.data.positions import damaged
from vtrain.errors import StorageError
from vtrain.storage.crc32c import bytes_crc32c, crc32c

BLOCK = 1 << 20
"""Bytes read at a time (a larger record is read alone)."""
KNOWN_HEADERS = 4096
"""Checked headers kept (one per record length): a few hundred KB at most."""
_HEADER = struct.Struct("<QI")


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC32C: rotated right by 15 bits, plus a constant."""
    return mask(crc32c(data))


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
    crc = bytes_crc32c()
    headers, layouts = _Headers(crc), _Layouts(check_crc)
    records, skip, step, count = cursor.records, cursor.skip, cursor.step, cursor.count
    buf, base, pos = b"", cursor.offset, 0  # base: the file offset of buf[0]
    while more := stream.read(BLOCK):
        buf, base = buf[pos:] + more, base + pos
        ends: list[int] = []
        pos = _walk(buf, headers, ends)
        n = len(ends)
        if n:
            # A format of its own per block: not one for `struct`'s cache to keep.
            values = struct.Struct(layouts.of(ends, skip, step)).unpack_from(buf)
            if check_crc:  # data₁, checksum₁, data₂ …
                bad = first_mismatch(values, crc32c)
                datas = values[: 2 * bad : 2] if bad is not None else values[::2]
            else:
                bad, datas = None, values
            if datas:
                cursor.skip = step - 1
                # The loop's targets are the cursor's fields: set as each record is given out.
                # `datas` stops short at a bad record: the others stop with it.
                for cursor.offset, cursor.records, cursor.count, data in zip(
                    map(base.__add__, ends[skip::step]),
                    range(records + skip + 1, records + n + 1, step),
                    range(count + 1, count + len(datas) + 1),
                    datas,
                    strict=False,
                ):
                    yield data
            if bad is not None:
                at = skip + step * bad  # the bad record's index in the block
                raise _corrupt(where, base + (ends[at - 1] if at else 0))
            kept = len(range(skip, n, step))
            records, count, skip = records + n, count + kept, skip - n + step * kept
        header = buf[pos : pos + 12]
        if len(header) == 12 and header not in headers and headers.size(header) is None:
            raise damaged(
                where,
                base + pos,
                "a corrupt record length (its checksum does not match)",
                hint="a damaged file, or not a TFRecord file",
            )
        size = headers.get(header, 0)
        if size > BLOCK:  # a large record: read alone, in one piece, not copied into a block
            # Any 8 bytes and their masked CRC make a valid header: a torn copy can turn data
            # into a length of up to 2**64. A length is only believed if the file holds it.
            left = stream.seek(0, io.SEEK_END) - (base + pos)
            if size > left:
                raise _torn(where, base + pos, size, left)
            records += 1
            if skip:  # passed over unread, as TensorFlow's reader does: only its length checked
                skip -= 1
                stream.seek(base + pos + size)
            else:
                stream.seek(base + pos + 12)
                data, footer = stream.read(size - 16), stream.read(4)
                if len(data) + len(footer) < size - 12:  # the file shrank while it was read
                    raise _torn(where, base + pos, size, 12 + len(data) + len(footer))
                skip = step - 1
                if check_crc and mask(crc(data)) != int.from_bytes(footer, "little"):
                    raise _corrupt(where, base + pos)
                count += 1
                cursor.offset, cursor.records, cursor.skip = base + pos + size, records, skip
                cursor.count = count
                yield data
            buf, base, pos = b"", base + pos + size, 0
    if pos < len(buf):
        if len(buf) - pos < 12:
            raise damaged(where, base + pos, "a torn record header (the file ends inside it)")
        raise _torn(where, base + pos, headers[buf[pos : pos + 12]], len(buf) - pos)
    cursor.offset, cursor.records, cursor.skip, cursor.count = base + pos, records, skip, count


def _corrupt(where: str, offset: int) -> StorageError:
    return damaged(where, offset, "a corrupt record (its data checksum does not match)")


def _torn(where: str, offset: int, size: int, have: int) -> StorageError:
    """The error for a record of `size` bytes of which the file holds `have`."""
    problem = f"a torn record of {size - 16} bytes (the file ends {size - have} bytes early)"
    return damaged(where, offset, problem)


class _Headers(dict[bytes, int]):
    """Record headers whose length checksum matched, each with its record's size in bytes."""

    def __init__(self, crc: Callable[[bytes], int]) -> None:
        super().__init__()
        self.crc = crc

    def size(self, header: bytes) -> int | None:
        """The size of the record `header` starts (12 + length + 4); None if its checksum fails."""
        length, stored = _HEADER.unpack(header)
        if mask(self.crc(header[:8])) != stored:
            return None
        if len(self) >= KNOWN_HEADERS:
            self.clear()
        size: int = length + 16
        self[header] = size
        return size


def _walk(buf: bytes, headers: _Headers, ends: list[int]) -> int:
    """Append where each whole record at the start of `buf` ends; return where the first that
    is not whole, or whose header fails its checksum, starts."""
    pos, get, append = 0, headers.get, ends.append
    while True:
        size = get(buf[pos : pos + 12])
        if size is None:
            header = buf[pos : pos + 12]  # past the end (b""), torn, or not checked yet
            if len(header) < 12 or (size := headers.size(header)) is None:
                break
        pos += size
        append(pos)
    if ends and ends[-1] > len(buf):  # only the last can end past the buffer: it stopped there
        ends.pop()
    return ends[-1] if ends else 0


class _Layouts:
    """`struct` formats of a block: each record kept as its data (and its stored checksum,
    4 bytes, when checked); each record skipped as padding."""

    def __init__(self, check_crc: bool) -> None:
        tail = "4s" if check_crc else "4x"
        self.kept = _Fragments(lambda size: f"12x{size - 16}s{tail}")
        self.skipped = _Fragments(lambda size: f"{size}x")

    def of(self, ends: list[int], skip: int, step: int) -> str:
        """The format of the records that end at `ends`, of which `skip`, `skip + step` … are
        kept."""
        sizes = list(map(sub, ends, [0, *ends[:-1]]))
        if skip == 0 and step == 1:
            return "<" + "".join(map(self.kept.__getitem__, sizes))
        parts = list(map(self.skipped.__getitem__, sizes))
        parts[skip::step] = map(self.kept.__getitem__, sizes[skip::step])
        return "<" + "".join(parts)


class _Fragments(dict[int, str]):
    """One record's format, by the record's size, made at first use (as many kept as headers)."""

    def __init__(self, make: Callable[[int], str]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, size: int) -> str:
        if len(self) >= KNOWN_HEADERS:
            self.clear()
        self[size] = fragment = self.make(size)
        return fragment
