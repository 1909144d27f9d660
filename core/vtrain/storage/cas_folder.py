"""A document's compare-and-set in a mounted folder (a local disk, /gcs/): flock, then a rename.

The version read is its own token: `put` reads the document again under an
exclusive flock on the folder and writes only if it is still those bytes (every
lease written differs, by its heartbeat). flock serializes the processes of one
machine; the rename means a reader never sees half a document. Two machines on
/gcs/ share no lock: both may write in the same instant, and the one overwritten
finds out at its next `get`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from vtrain.storage.cas import CompareAndSet


class FolderCas(CompareAndSet):
    """The file `name` in the folder `folder`, which must exist: `put` never creates it."""

    def __init__(self, folder: str, name: str) -> None:
        self.folder = folder
        self.uri = os.path.join(folder, name)

    def get(self) -> tuple[bytes | None, object]:
        try:
            with open(self.uri, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None, None
        return data, data

    def put(self, data: bytes | None, token: object) -> bool:
        with self._locked():
            if self.get()[1] != token:
                return False
            if data is None:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(self.uri)
                return True
            tmp = f"{self.uri}.{os.urandom(6).hex()}.tmp"
            try:
                with open(tmp, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.uri)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(tmp)
        return True

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            import fcntl

            # A file system without locks: the compare and the rename still hold, unserialized.
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # and the lock with it
