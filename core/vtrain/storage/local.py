"""`LocalLocation`: a folder on a local POSIX disk, where a folder rename is atomic."""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import TYPE_CHECKING, BinaryIO

from vtrain.errors import StorageError
from vtrain.storage.files import CHUNK, copy_file, os_errors, walk_files, write_all
from vtrain.storage.location import Location

if TYPE_CHECKING:
    from typing_extensions import Buffer

    from vtrain.storage.cas import CompareAndSet


class LocalLocation(Location):
    """A folder on a local disk: writes are fsynced, folder renames are atomic.

    `path` is the folder's path, made absolute; it need not exist yet.
    """

    atomic_rename = True

    def __init__(self, path: str) -> None:
        self._path = os.path.abspath(path)

    @property
    def uri(self) -> str:
        return self._path

    @property
    def path(self) -> str:
        return self._path

    def _file_path(self, name: str) -> str:
        return self.full(self._file(name))

    def full(self, name: str = "") -> str:
        """The file-system path of `name` inside this folder."""
        name = self._check(name)
        return os.path.join(self._path, *name.split("/")) if name else self._path

    def join(self, *names: str) -> LocalLocation:
        return type(self)(self.full(self._child(*names)))

    def open_read(self, name: str) -> BinaryIO:
        with os_errors("open for reading", self.uri, name):
            return open(self._file_path(name), "rb", buffering=CHUNK)

    def open_write(self, name: str) -> BinaryIO:
        path = self._file_path(name)
        with os_errors("open for writing", self.uri, name):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            return open(path, "wb", buffering=CHUNK)

    def read_bytes(self, name: str) -> bytes:
        with os_errors("read", self.uri, name), open(self._file_path(name), "rb", buffering=0) as f:
            return f.read()

    def write_bytes(self, name: str, data: Buffer) -> None:
        path = self._file_path(name)
        with os_errors("write", self.uri, name):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
            try:
                write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)

    def download_fileobj(self, name: str, fileobj: BinaryIO) -> None:
        with os_errors("read", self.uri, name), open(self._file_path(name), "rb", buffering=0) as f:
            while chunk := f.read(CHUNK):
                fileobj.write(chunk)

    def exists(self, name: str = "") -> bool:
        path = self.full(name)
        if os.path.isdir(path):
            # As on an object store, where a folder is only the prefix of its files.
            return bool(os.listdir(path))
        return os.path.exists(path)

    def list(self, name: str = "") -> list[str]:
        try:
            return sorted(os.listdir(self.full(name)))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as e:
            raise StorageError(f"cannot list: {e.strerror}", source=self.uri, path=name) from e

    def cas(self, name: str) -> CompareAndSet:
        from vtrain.storage.cas_folder import FolderCas

        path = self._file_path(name)
        return FolderCas(os.path.dirname(path), os.path.basename(path))

    def makedirs(self, name: str = "") -> None:
        with os_errors("create folder", self.uri, name):
            os.makedirs(self.full(name), exist_ok=True)

    def remove(self, name: str = "") -> None:
        path = self.full(name)
        with os_errors("remove", self.uri, name):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)

    def upload(self, local_path: str, name: str = "") -> None:
        dst = self.full(name)
        with os_errors("copy in", self.uri, name):
            if os.path.isdir(local_path):
                for rel in walk_files(local_path):
                    copy_file(os.path.join(local_path, rel), os.path.join(dst, rel), sync=True)
            else:
                copy_file(local_path, dst, sync=True)

    def download(self, name: str, local_path: str) -> None:
        src = self.full(name)
        with os_errors("copy out", self.uri, name):
            if os.path.isdir(src):
                for rel in walk_files(src):
                    copy_file(os.path.join(src, rel), os.path.join(local_path, rel), sync=False)
            else:
                copy_file(src, local_path, sync=False)
