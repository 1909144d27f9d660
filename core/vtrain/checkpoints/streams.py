"""Moving checkpoint bytes and computing their checksum in the same pass, hidden behind the I/O.

Both CRCs (see `checksums`) and file I/O release the GIL. A local save copies
the bytes into the page cache, then checksums while fsync waits on the disk; a
large file read back checksums on a second thread. A large file on a local disk
is restored as a memory map: the CRC reads the page cache directly, with no copy
at all. (Object stores: see `transfer`.)
"""

from __future__ import annotations

import mmap
import os
import queue
import threading
import zlib
from types import TracebackType
from typing import TYPE_CHECKING

from vtrain.checkpoints.checksums import CRC32, updater
from vtrain.errors import CheckpointError
from vtrain.storage.files import CHUNK, write_all

if TYPE_CHECKING:
    from typing_extensions import Buffer

PARALLEL_MIN = 4 << 20
"""Below this many bytes a second thread costs more than it saves."""


class Checksum:
    """A running checksum; for large inputs it runs on a second thread. Use as a context manager."""

    def __init__(self, size_hint: int, algorithm: str = CRC32) -> None:
        self._update = updater(algorithm)
        self._value = 0
        self._error: BaseException | None = None
        self._queue: queue.SimpleQueue[Buffer | None] | None = None
        self._thread: threading.Thread | None = None
        if size_hint >= PARALLEL_MIN:
            self._queue = queue.SimpleQueue()
            self._thread = threading.Thread(target=self._run, name="vtrain-checksum", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        assert self._queue is not None
        while (chunk := self._queue.get()) is not None:
            try:
                self._value = self._update(chunk, self._value)
            except BaseException as e:  # kept for value(); the thread must keep draining
                self._error = e

    def update(self, chunk: Buffer) -> None:
        """Add bytes; the caller must not change them until `value()` returns."""
        if self._queue is not None:
            self._queue.put(chunk)
        else:
            self._value = self._update(chunk, self._value)

    def value(self) -> int:
        """The CRC of everything added so far (waits for the second thread)."""
        self.close()
        if self._error is not None:
            raise self._error
        return self._value

    def close(self) -> None:
        """Stop the second thread, if there is one."""
        if self._thread is not None and self._queue is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def __enter__(self) -> Checksum:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def mismatch(where: str, name: str, what: str, got: str, expected: str) -> CheckpointError:
    """The error for a file that does not match its manifest entry."""
    return CheckpointError(
        f"file {name!r} does not match the manifest ({what})",
        source=where,
        value=got,
        expected=expected,
        hint="the file was truncated, changed or damaged after the step was committed",
    )


def write_file(path: str, data: memoryview) -> int:
    """Write and fsync a local file; return its CRC-32, computed while fsync waits on the disk.

    The order matters on a busy machine: the copy into the page cache comes
    first, then the disk (or gcsfuse's upload) works through fsync while this
    thread checksums, so the CRC needs no second free core to be hidden.
    """
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        write_all(fd, data)
        if len(data) < PARALLEL_MIN:
            os.fsync(fd)
            return zlib.crc32(data)
        failed: list[OSError] = []

        def sync() -> None:
            try:
                os.fsync(fd)
            except OSError as e:
                failed.append(e)

        syncer = threading.Thread(target=sync, name="vtrain-fsync", daemon=True)
        syncer.start()
        try:
            crc = zlib.crc32(data)
        finally:
            syncer.join()
        if failed:
            raise failed[0]
        return crc
    finally:
        os.close(fd)


def file_crc(path: str, *, sync: bool = False, algorithm: str = CRC32) -> tuple[int, int]:
    """(size, checksum) of a local file, read with large buffers; fsync it first when `sync`."""
    with open(path, "rb", buffering=0) as f:
        if sync:
            os.fsync(f.fileno())
        size = os.fstat(f.fileno()).st_size
        with Checksum(size, algorithm) as crc:
            total = 0
            while chunk := f.read(CHUNK):
                crc.update(chunk)  # a fresh bytes object per chunk: safe to hand to the thread
                total += len(chunk)
            return total, crc.value()


def read_into(
    path: str, buffer: bytearray, *, where: str, name: str, algorithm: str = CRC32
) -> int:
    """Fill `buffer` with a local file that must be exactly as long; return its checksum."""
    size = len(buffer)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as f:
        actual = os.fstat(f.fileno()).st_size
        if actual != size:
            raise mismatch(where, name, "size", f"{actual} bytes", f"{size} bytes")
        with Checksum(size, algorithm) as crc:
            pos = 0
            while pos < size:
                got = f.readinto(view[pos : pos + CHUNK])
                if not got:
                    raise mismatch(where, name, "size", f"{pos} bytes", f"{size} bytes")
                crc.update(view[pos : pos + got])
                pos += got
            return crc.value()


MAP_MIN = 1 << 20
"""From this size on, a file on a local disk is memory-mapped rather than read."""


def map_verified(
    path: str, size: int, *, where: str, name: str, algorithm: str = CRC32
) -> tuple[memoryview, int]:
    """A read-only view of a local file that must be `size` bytes long, and its checksum.

    The view is a memory map: committed files are never rewritten in place (a
    new save of a step writes a new folder), so the mapping stays valid even after
    retention unlinks the file.
    """
    with open(path, "rb") as f:
        actual = os.fstat(f.fileno()).st_size
        if actual != size:
            raise mismatch(where, name, "size", f"{actual} bytes", f"{size} bytes")
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if hasattr(mapped, "madvise"):
        mapped.madvise(mmap.MADV_SEQUENTIAL)  # read-ahead in large steps on a cold disk
    view = memoryview(mapped)
    return view, updater(algorithm)(view, 0)
