"""The messages between vtrain and its keeper on their socket: a length, then a marshalled tuple."""

from __future__ import annotations

import marshal
import struct

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_HEADER = struct.Struct("!I")


def frame(message: tuple[Any, ...]) -> bytes:
    """`message` as it travels: its length, then the marshalled tuple."""
    data = marshal.dumps(message)
    return _HEADER.pack(len(data)) + data


class Frames:
    """Bytes from the socket, cut into messages: a length, then a marshalled tuple."""

    def __init__(self) -> None:
        self._data = b""

    def feed(self, chunk: bytes) -> list[tuple[Any, ...]]:
        """The messages that `chunk` completes, in order."""
        data = self._data + chunk
        found = []
        while len(data) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(data)
            end = _HEADER.size + size
            if len(data) < end:
                break
            found.append(marshal.loads(data[_HEADER.size : end]))
            data = data[end:]
        self._data = data
        return found
