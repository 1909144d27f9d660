# The C module built from _checked_records.c (hatch_build.py), where a compiler was at hand.

hardware: bool
"""True where the CPU has the CRC32C instruction; `first_bad` needs it."""

def first_bad(block: bytes, ends: list[int], skip: int, step: int, /) -> int | None: ...
def crc32c(data: bytes, value: int = 0, /) -> int: ...
