"""Moving one checkpoint's files to and from an object store, several requests at a time.

On gs:// every request waits on a round trip, so a checkpoint's files move
`location.transfers` at a time and a large file comes down in ranges fetched
side by side. Each file's checksum (CRC32C there: the value Cloud Storage keeps)
is computed before its upload and sent with it, so the server refuses bytes
damaged on the way. A restore first compares the server's values with the
manifest, which finds a changed object without downloading it, then checks the
bytes that arrive, and fetches a file once more if they were damaged in transit.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from vtrain.checkpoints.checksums import LABELS, checksum
from vtrain.checkpoints.manifest import FileEntry, Manifest
from vtrain.checkpoints.streams import file_crc, mismatch
from vtrain.errors import CheckpointError
from vtrain.storage.location import Location

if TYPE_CHECKING:
    from typing_extensions import Buffer

RANGE = 32 << 20
"""A file of more than two of these comes down in ranges of this size, side by side."""
ATTEMPTS = 2
"""Downloads of one file before its damaged bytes are refused."""

T = TypeVar("T")


def parallel(workers: int, tasks: Iterable[Callable[[], T]]) -> list[T]:
    """Run `tasks` on up to `workers` threads; results in order, the first error raised."""
    todo = list(tasks)
    if workers <= 1 or len(todo) <= 1:
        return [task() for task in todo]
    from concurrent.futures import ThreadPoolExecutor  # here: `import vtrain` stays light

    with ThreadPoolExecutor(min(workers, len(todo)), thread_name_prefix="vtrain-transfer") as pool:
        futures = [pool.submit(task) for task in todo]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def put_buffers(target: Location, files: Mapping[str, memoryview]) -> list[FileEntry]:
    """Write in-memory files, each with its checksum, `target.transfers` at a time."""
    algorithm = target.checksum

    def put(name: str, view: memoryview) -> FileEntry:
        value = checksum(algorithm, view)
        target.write_checked(name, view, value)
        return FileEntry(name, len(view), value)

    return parallel(target.transfers, [partial(put, n, v) for n, v in files.items()])


def put_paths(target: Location, folder: str, names: list[str]) -> list[FileEntry]:
    """Upload the files a writer left in a local folder, `target.transfers` at a time."""
    algorithm = target.checksum

    def put(rel: str) -> FileEntry:
        path = os.path.join(folder, *rel.split("/"))
        size, value = file_crc(path, algorithm=algorithm)
        target.upload_checked(path, rel, value)
        return FileEntry(rel, size, value)

    return parallel(target.transfers, [partial(put, r) for r in names])


def check_stored(data: Location, manifest: Manifest, where: str) -> None:
    """Compare what the store keeps for each file with the manifest, before any download."""
    stored = data.stored_checksums()
    if stored is None:
        return
    for entry in manifest.files:
        if entry.name not in stored:
            raise CheckpointError(
                f"cannot read a file the manifest names: {entry.name!r} is not in the store",
                source=where,
                hint="the step was damaged or deleted after it was committed",
            )
        size, value = stored[entry.name]
        if size != entry.size:
            raise mismatch(where, entry.name, "size", f"{size} bytes", f"{entry.size} bytes")
        if manifest.checksum == data.checksum and value != entry.checksum:
            raise mismatch(
                where,
                entry.name,
                f"the {LABELS[data.checksum]} the store keeps",
                f"{value:08x}",
                f"{entry.checksum:08x}",
            )


class _At(io.RawIOBase):
    """A writable file object that stores what it is given from one offset of a buffer or fd."""

    def __init__(self, target: bytearray | int, offset: int, end: int) -> None:
        super().__init__()
        self._target = target
        self._pos = offset
        self._end = end

    def writable(self) -> bool:
        return True

    def write(self, b: Buffer) -> int:
        view = memoryview(b).cast("B")
        n = len(view)
        if self._pos + n > self._end:
            raise CheckpointError(
                "the store sent more bytes than the range asked for",
                value=f"{self._pos + n - self._end} extra bytes",
                expected="a server that honours Range requests",
            )
        if isinstance(self._target, bytearray):
            self._target[self._pos : self._pos + n] = view
        else:
            os.pwrite(self._target, view, self._pos)
        self._pos += n
        return n


def _get_range(data: Location, name: str, target: bytearray | int, start: int, end: int) -> None:
    data.download_range(name, _At(target, start, end), start, end)  # type: ignore[arg-type]


def _ranges(size: int) -> list[tuple[int, int]]:
    if size <= 2 * RANGE:
        return [(0, size)]
    return [(start, min(start + RANGE, size)) for start in range(0, size, RANGE)]


def _fetch(
    data: Location,
    entry: FileEntry,
    target: bytearray | int,
    digest: Callable[[], int],
    where: str,
) -> None:
    """Fill `target` (a buffer or a file descriptor) with one file, in ranges side by side;
    `digest` checksums what arrived. Damaged bytes are fetched once more, then refused."""
    for attempt in range(ATTEMPTS):
        ranges = _ranges(entry.size) if entry.size else []
        fetches = [partial(_get_range, data, entry.name, target, *r) for r in ranges]
        parallel(data.transfers, fetches)
        got = digest()
        if got == entry.checksum:
            return
        if attempt == ATTEMPTS - 1:
            raise mismatch(
                where, entry.name, f"checksum of the bytes received, {ATTEMPTS} downloads",
                f"{got:08x}", f"{entry.checksum:08x}",
            )  # fmt: skip


def get_buffers(data: Location, manifest: Manifest, where: str) -> dict[str, memoryview]:
    """Download every file of a step into memory, checked; several at a time."""
    check_stored(data, manifest, where)
    buffers = {entry.name: bytearray(entry.size) for entry in manifest.files}

    def get(entry: FileEntry) -> None:
        buffer = buffers[entry.name]
        _fetch(data, entry, buffer, lambda: checksum(manifest.checksum, buffer), where)

    parallel(
        1 if _any_large(manifest) else data.transfers, [partial(get, e) for e in manifest.files]
    )
    return {name: memoryview(buffer) for name, buffer in buffers.items()}


def get_folder(
    data: Location, manifest: Manifest, folder: str, where: str, copied: list[str]
) -> None:
    """Download every file of a step into a local folder, checked; `copied` lists what was made."""
    check_stored(data, manifest, where)

    def get(entry: FileEntry) -> None:
        target = os.path.join(folder, *entry.name.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        copied.append(target)
        fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            os.ftruncate(fd, entry.size)
            _fetch(data, entry, fd, lambda: file_crc(target, algorithm=manifest.checksum)[1], where)
        finally:
            os.close(fd)

    parallel(
        1 if _any_large(manifest) else data.transfers, [partial(get, e) for e in manifest.files]
    )


def _any_large(manifest: Manifest) -> bool:
    return any(entry.size > 2 * RANGE for entry in manifest.files)
