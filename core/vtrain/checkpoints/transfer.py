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

import os
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import TypeVar

from vtrain.checkpoints.checksums import LABELS, checksum
from vtrain.checkpoints.manifest import FileEntry, Manifest
from vtrain.checkpoints.streams import file_crc, mismatch
from vtrain.errors import CheckpointError
from vtrain.storage.location import Location

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


def _get_range(data: Location, name: str, target: bytearray | int, start: int, end: int) -> bytes:
    chunk = data.read_range(name, start, end)
    if len(chunk) != end - start:
        raise CheckpointError(
            f"the store sent {len(chunk)} bytes of {name!r} for a range of {end - start}",
            source=data.uri,
            value=f"bytes {start}-{end - 1}",
            expected="a server that honours Range requests",
        )
    if isinstance(target, bytearray):
        target[start:end] = chunk
    elif target >= 0:
        os.pwrite(target, chunk, start)
    return chunk


def _ranges(size: int) -> list[tuple[int, int]]:
    if size <= 2 * RANGE:
        return [(0, size)]
    return [(start, min(start + RANGE, size)) for start in range(0, size, RANGE)]


def _verified(entry: FileEntry, where: str, attempt: Callable[[], tuple[int, T]]) -> T:
    """`attempt()` gives (checksum of what arrived, result); damage is fetched once more."""
    for _ in range(ATTEMPTS):
        got, result = attempt()
        if got == entry.checksum:
            return result
    raise mismatch(
        where,
        entry.name,
        f"checksum of the bytes received, {ATTEMPTS} downloads",
        f"{got:08x}",
        f"{entry.checksum:08x}",
    )


def get_buffers(data: Location, manifest: Manifest, where: str) -> dict[str, memoryview]:
    """Download every file of a step into memory, checked; several at a time."""
    check_stored(data, manifest, where)

    def attempt(entry: FileEntry) -> tuple[int, memoryview]:
        ranges = _ranges(entry.size)
        if len(ranges) == 1:  # one request: keep the bytes the client built, without a copy
            content: bytes | bytearray = _get_range(data, entry.name, -1, 0, entry.size)
        else:
            content = bytearray(entry.size)
            parallel(
                data.transfers, [partial(_get_range, data, entry.name, content, *r) for r in ranges]
            )
        return checksum(manifest.checksum, content), memoryview(content)

    def get(entry: FileEntry) -> memoryview:
        return _verified(entry, where, partial(attempt, entry))

    views = parallel(_file_workers(data, manifest), [partial(get, e) for e in manifest.files])
    return {entry.name: view for entry, view in zip(manifest.files, views, strict=True)}


def get_folder(
    data: Location, manifest: Manifest, folder: str, where: str, copied: list[str]
) -> None:
    """Download every file of a step into a local folder, checked; `copied` lists what was made."""
    check_stored(data, manifest, where)

    def attempt(entry: FileEntry, target: str, fd: int) -> tuple[int, None]:
        fetches = [partial(_get_range, data, entry.name, fd, *r) for r in _ranges(entry.size)]
        parallel(data.transfers, fetches if entry.size else [])
        return file_crc(target, algorithm=manifest.checksum)[1], None

    def get(entry: FileEntry) -> None:
        target = os.path.join(folder, *entry.name.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        copied.append(target)
        fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            os.ftruncate(fd, entry.size)
            _verified(entry, where, partial(attempt, entry, target, fd))
        finally:
            os.close(fd)

    parallel(_file_workers(data, manifest), [partial(get, e) for e in manifest.files])


def _file_workers(data: Location, manifest: Manifest) -> int:
    # A large file already fetches in ranges side by side: files then go one after the
    # other, or threads would multiply by threads.
    large = any(entry.size > 2 * RANGE for entry in manifest.files)
    return 1 if large else data.transfers
