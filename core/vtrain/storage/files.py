"""File I/O shared by the storage backends and checkpoints: big-buffer copies, fsyncs, walks.

They live apart from `LocalLocation` because the Cloud Storage backend and the
checkpoint writer use them on plain local paths, with no location involved.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from vtrain.errors import StorageError
from vtrain.os_hints import hint_for

if TYPE_CHECKING:
    from typing_extensions import Buffer

CHUNK = 16 << 20
"""Bytes per read or write call: large enough that system-call overhead is noise."""
_READS = frozenset({"open for reading", "read"})
"""The operations that only read: a failure there is about the file, not about writing."""


@contextlib.contextmanager
def os_errors(operation: str, where: str, name: str = "") -> Iterator[None]:
    """Turn an `OSError` into a `StorageError` that names the operation and the file."""
    try:
        yield
    except FileNotFoundError as e:
        raise StorageError(f"cannot {operation}: not found", source=where, path=name or None) from e
    except OSError as e:
        raise StorageError(
            f"cannot {operation}: {e.strerror or e}",
            source=where,
            path=name or None,
            hint=hint_for(
                e,
                "check that the file exists and this user may read it"
                if operation in _READS
                else "check that the folder exists and this user may write there",
            ),
        ) from e


def write_all(fd: int, data: Buffer) -> int:
    """Write a whole buffer to a file descriptor in large slices; return its length."""
    view = memoryview(data).cast("B")
    pos, size = 0, len(view)
    while pos < size:
        pos += os.write(fd, view[pos : pos + CHUNK])
    return size


def fsync_dir(path: str) -> None:
    """Make a folder's entries durable (new, renamed or removed names)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems (FUSE, network mounts) refuse fsync on a folder; nothing to do
    finally:
        os.close(fd)


def copy_file(src: str, dst: str, *, sync: bool) -> None:
    """Copy one file with large buffers; fsync the copy when `sync`."""
    os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
    with open(src, "rb", buffering=0) as fin:
        fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            while chunk := fin.read(CHUNK):
                write_all(fd, chunk)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)


def walk_files(root: str) -> list[str]:
    """Relative '/'-separated names of the regular files under `root`, sorted."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for f in files:
            full = os.path.join(folder, f)
            if os.path.islink(full) or not os.path.isfile(full):
                raise StorageError(
                    "not a regular file",
                    source=root,
                    value=os.path.relpath(full, root),
                    expected="plain files and folders only (no links, sockets or devices)",
                )
            found.append(os.path.relpath(full, root).replace(os.sep, "/"))
    return sorted(found)
