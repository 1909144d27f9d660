"""TFRecord's masked CRC32C, and a check of a whole block of records' masks with one CRC.

Per record, a checksum call and the masking arithmetic cost more interpreter
time than the CRC itself (a few hundred bytes at GB/s). So the reader checks a
block of records at once: it unmasks every stored checksum with integer
arithmetic on all of them together, then takes one CRC32C over
`data₁ w₁ data₂ w₂ …`, where `wᵢ` is record i's unmasked checksum XOR `RESET`.
A CRC register fed a message and then its own CRC holds a constant; `RESET`
turns that constant back into the starting register. So the CRC of the whole is
0 when every record matches. When one record does not, the register differs
after it, and the bytes after it never undo a difference (each step is
invertible): the CRC is not 0. Several wrong records could cancel out with odds
of about 2⁻³², the odds that a damaged record passes its own checksum. Only
when the block fails is each record checked on its own, to name the first bad
one.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF
# ~G⁻¹(0xFFFFFFFF), G being 32 steps of the reflected Castagnoli register with no input:
# after a message and (its CRC XOR RESET), the register is 0xFFFFFFFF, as at the start.
RESET = 0x9BE09BAB
_LANE = (1).to_bytes(8, "little")  # a 64-bit lane per checksum: room for carries and rotation
FEW = 8
"""Below this many records, each is checked on its own: they are long, and calls are few."""


def mask(crc: int) -> int:
    """TFRecord's mask of a CRC32C: rotated right by 15 bits, plus a constant."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & _U32


def first_mismatch(values: tuple[bytes, ...], crc: Callable[[bytes], int]) -> int | None:
    """The index of the first record whose masked CRC32C is not its stored one; None if all match.

    `values`: data₁, stored₁, data₂, stored₂ …, as one `struct` call unpacks a block (each
    stored checksum as its 4 bytes, little-endian).
    """
    if len(values) >= 2 * FEW and crc(_chained(values)) == 0:
        return None
    for i in range(0, len(values), 2):
        if mask(crc(values[i])) != int.from_bytes(values[i + 1], "little"):
            return i // 2
    return None


def _chained(values: tuple[bytes, ...]) -> bytes:
    """data₁ w₁ data₂ w₂ …, whose CRC32C is 0 when every stored checksum matches its data."""
    n = len(values) // 2
    stored = int.from_bytes(b"".join(values[1::2]), "little")  # 32 bits a record
    # Unmask the even and the odd checksums, each in 64-bit lanes (room for carries and the
    # rotation): subtract the constant (mod 2³²), rotate left by 15, XOR RESET.
    ones = int.from_bytes(_LANE * (n // 2 + 1), "little")
    low32, low15, minus, reset = (ones * c for c in (_U32, 0x7FFF, _U32 + 1 - _MASK_DELTA, RESET))
    words = 0
    for shift in (0, 32):
        lanes = (((stored >> shift) & low32) + minus) & low32
        lanes = ((lanes << 15) & low32) | ((lanes >> 17) & low15)
        words |= (lanes ^ reset) << shift
    m = -(-n // 64) * 64
    parts = list(values)
    parts[1::2] = _words(m).unpack(words.to_bytes(4 * m + 8, "little")[: 4 * m])[:n]
    return b"".join(parts)


def _words(count: int) -> struct.Struct:
    """The format of `count` 4-byte words, compiled once: a block's count, rounded up to a
    multiple of 64, takes few values. (Not `struct`'s own cache: it keeps 100 formats, here
    up to megabytes each.)"""
    compiled = _FORMATS.get(count)
    if compiled is None:
        if len(_FORMATS) >= 8:
            _FORMATS.clear()
        compiled = _FORMATS[count] = struct.Struct("<" + "4s" * count)
    return compiled


_FORMATS: dict[int, struct.Struct] = {}
