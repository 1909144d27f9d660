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

The unmasking works on all the block's checksums as one integer, 32 bits a
checksum, with masks that keep each word's carries and rotated bits inside it.
The CRC is taken over `CHUNK` records at a time, continuing one value: the
joined bytes then stay in the CPU cache for the CRC, and the memory of one
chunk is reused by the next (in the reader's loop the check measured about a
quarter cheaper than with one join of the whole block).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF
_PLUS = _U32 + 1 - _MASK_DELTA  # adding it subtracts the mask's constant, mod 2³²
# ~G⁻¹(0xFFFFFFFF), G being 32 steps of the reflected Castagnoli register with no input:
# after a message and (its CRC XOR RESET), the register is 0xFFFFFFFF, as at the start.
RESET = 0x9BE09BAB
FEW = 8
"""Below this many records, each is checked on its own: they are long, and calls are few."""
CHUNK = 128
"""Records joined for one CRC call: about 80 KB of typical records, within the CPU's cache."""


def mask(crc: int) -> int:
    """TFRecord's mask of a CRC32C: rotated right by 15 bits, plus a constant."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & _U32


def first_mismatch(values: tuple[bytes, ...], crc: Callable[[bytes, int], int]) -> int | None:
    """The index of the first record whose masked CRC32C is not its stored one; None if all match.

    `values`: data₁, stored₁, data₂, stored₂ …, as one `struct` call unpacks a block (each
    stored checksum as its 4 bytes, little-endian). `crc(data, value)`: the CRC32C of `data`
    continuing from `value`, as `vtrain.storage.crc32c.crc32c`.
    """
    if len(values) >= 2 * FEW:
        parts, value, join, step = _chained(values), 0, b"".join, 2 * CHUNK
        for start in range(0, len(parts), step):
            value = crc(join(parts[start : start + step]), value)
        if value == 0:
            return None
    for i in range(0, len(values), 2):
        if mask(crc(values[i], 0)) != int.from_bytes(values[i + 1], "little"):
            return i // 2
    return None


def _chained(values: tuple[bytes, ...]) -> list[bytes]:
    """data₁ w₁ data₂ w₂ …, whose CRC32C is 0 when every stored checksum matches its data."""
    n = len(values) // 2
    m = -(-n // 64) * 64
    low31, plus_low, plus_top, high17, low15, reset, words = _constants(m)
    stored = int.from_bytes(b"".join(values[1::2]), "little")  # 32 bits a record
    # Each word minus the mask's constant, mod 2³²: its low 31 bits added alone (the sum
    # cannot carry into the next word), its top bit XORed with the two top bits it adds.
    low = stored & low31
    unmasked = (low + plus_low) ^ stored ^ low ^ plus_top
    # Each word rotated left by 15 (the bits shifted into a neighbour are masked off), XOR RESET.
    unmasked = (((unmasked << 15) & high17) | ((unmasked >> 17) & low15)) ^ reset
    parts = list(values)
    parts[1::2] = words.unpack(unmasked.to_bytes(4 * m, "little"))[:n]
    return parts


def _constants(count: int) -> tuple[int, int, int, int, int, int, struct.Struct]:
    """Per-word masks repeated `count` times, and the format of `count` 4-byte words, made
    once: a block's count, rounded up to a multiple of 64, takes few values. (Not `struct`'s
    own cache: it keeps 100 formats, here up to megabytes each.)"""
    made = _CONSTANTS.get(count)
    if made is None:
        if len(_CONSTANTS) >= 8:
            _CONSTANTS.clear()
        ones = int.from_bytes((1).to_bytes(4, "little") * count, "little")
        low31, plus_low, plus_top, high17, low15, reset = (
            ones * word
            for word in (
                0x7FFFFFFF,
                _PLUS & 0x7FFFFFFF,
                _PLUS & 0x80000000,
                0xFFFF8000,
                0x7FFF,
                RESET,
            )
        )
        words = struct.Struct("<" + "4s" * count)
        made = _CONSTANTS[count] = (low31, plus_low, plus_top, high17, low15, reset, words)
    return made


_CONSTANTS: dict[int, tuple[int, int, int, int, int, int, struct.Struct]] = {}
