"""Types for command-line flags: numbers in ASCII only, bounded, finite; tracking backends.

argparse's `type=int` and `type=float` take '١٢٣' (Arabic-Indic digits), 'inf'
and 'nan', and `int()` raises on text of more than 4300 digits. These types
take what a person types and refuse the rest with a message that names the
value; the range of each flag is checked where the flag is used.
"""

from __future__ import annotations

import argparse
import math
import re

from vtrain.cluster.fields import BLANKS, MAX_DIGITS

# Sign, leading zeros, the digits that count: int() refuses over 4300 of them, zeros included.
_INTEGER = re.compile(r"([+-]?)(?=[0-9])0*([0-9]*)")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SHOWN_CHARS = 40


def _quoted(text: str) -> str:
    return repr(text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "...")


def integer(text: str) -> int:
    """A whole number of at most MAX_DIGITS ASCII digits, with an optional sign."""
    match = _INTEGER.fullmatch(text.strip(BLANKS))
    if match is None or len(match[2]) > MAX_DIGITS:
        raise argparse.ArgumentTypeError(
            f"not an integer (got {_quoted(text)}); expected a whole number such as 2, "
            f"in digits 0-9 (at most {MAX_DIGITS})"
        )
    return int(match[1] + (match[2] or "0"))


def seconds(text: str) -> float:
    """A finite number of seconds in ASCII decimal notation (30, 2.5, 1e3)."""
    number = float(text) if _DECIMAL.fullmatch(text.strip(BLANKS)) else math.nan
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(
            f"not a number of seconds (got {_quoted(text)}); expected a finite number, e.g. 30"
        )
    return number


def track_option(text: str) -> str:
    """Tracking backends as VTRAIN_TRACK takes them: none, or a comma-separated list."""
    from vtrain.errors import ConfigError
    from vtrain.track.backends import VARIABLE, backends

    try:
        backends({VARIABLE: text})
    except ConfigError as e:
        raise argparse.ArgumentTypeError(
            f"not a tracking backend (got {_quoted(text)}); expected {e.expected}"
        ) from None
    return text.strip()
