"""The JSON Lines backend: a run's records in its output folder, one file per attempt.

On a disk or a /gcs/ mount the attempt's file is appended to; in a gs:// bucket
(objects are written whole) it is written again from the attempt's records at each
hand-over. Either way a reader (`vtrain.track.read_run`) sees what was handed over.
"""

from __future__ import annotations

import os
from typing import BinaryIO

from vtrain.storage import Location


class JsonLinesSink:
    """Writes one attempt's lines to `name` in `folder`."""

    def __init__(self, folder: Location, name: str) -> None:
        self._folder = folder
        self._name = name
        self._file: BinaryIO | None = None
        self._all: list[bytes] = []

    def __call__(self, lines: list[bytes]) -> None:
        path = self._folder.path
        if path is None:  # an object store: the whole object again, kept once it is written
            self._folder.write_bytes(self._name, b"".join(self._all + lines))
            self._all.extend(lines)
            return
        if self._file is None:
            os.makedirs(path, exist_ok=True)
            self._file = open(os.path.join(path, self._name), "ab")  # noqa: SIM115 - kept open
        self._file.write(b"".join(lines))
        self._file.flush()
