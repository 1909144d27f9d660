"""Text that is safe to show on a terminal: control characters written as escapes.

Host names, paths and arguments come from the environment and from files that
someone else wrote; an ANSI escape in one would recolour, move or hide what the
terminal shows, and an unpaired surrogate (a non-UTF-8 byte in a variable)
would make `print` raise instead.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with each non-printable character written as Python writes it in a repr."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
