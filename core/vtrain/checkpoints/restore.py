"""Finding committed steps and reading them back, every byte checked against the manifest."""

from __future__ import annotations

import contextlib
import os
import shutil

from vtrain.checkpoints.checkpoint import Checkpoint
from vtrain.checkpoints.checksums import LABELS
from vtrain.checkpoints.layout import MARKER, parse_step_folder, step_folder
from vtrain.checkpoints.manifest import FileEntry, Manifest
from vtrain.checkpoints.streams import MAP_MIN, file_crc, map_verified, mismatch, read_into
from vtrain.checkpoints.transfer import get_buffers, get_folder
from vtrain.errors import CheckpointError, StorageError
from vtrain.storage.location import Location
from vtrain.storage.staging import make_staging


def step_candidates(location: Location) -> list[int]:
    """Steps that have a folder, committed or not, in ascending order."""
    found = (parse_step_folder(name) for name in location.list())
    return sorted(s for s in found if s is not None)


def read_manifest(location: Location, step: int) -> Manifest:
    """The manifest of a committed step; `CheckpointError` when it has no valid marker."""
    name = f"{step_folder(step)}/{MARKER}"
    where = f"{location.uri}: step {step}"
    try:
        data = location.read_bytes(name)
    except StorageError as e:
        if location.exists(name):
            raise  # a marker that is there but cannot be read: a real fault, not "uncommitted"
        raise CheckpointError(
            "step is not committed (no commit marker)",
            source=where,
            hint="a save that was interrupted leaves such a folder; it is ignored",
        ) from e
    manifest = Manifest.from_marker(data, where)
    if manifest.step != step:
        raise CheckpointError(
            "commit marker belongs to another step",
            source=where,
            value=manifest.step,
            expected=str(step),
        )
    return manifest


def committed_manifest(location: Location, step: int) -> Manifest | None:
    """The manifest of a committed step, or None for a step folder without a valid marker."""
    try:
        return read_manifest(location, step)
    except CheckpointError:
        return None


def _file_path(data: Location, name: str) -> str | None:
    return None if data.path is None else os.path.join(data.path, *name.split("/"))


def _check(entry: FileEntry, size: int, crc: int, algorithm: str, where: str) -> None:
    if size != entry.size:
        raise mismatch(where, entry.name, "size", f"{size} bytes", f"{entry.size} bytes")
    if crc != entry.checksum:
        label = LABELS[algorithm]
        raise mismatch(where, entry.name, label, f"{crc:08x}", f"{entry.checksum:08x}")


def _read_local(
    path: str, data: Location, entry: FileEntry, algorithm: str, where: str
) -> memoryview:
    if data.atomic_rename and entry.size >= MAP_MIN:
        view, crc = map_verified(
            path, entry.size, where=where, name=entry.name, algorithm=algorithm
        )
        _check(entry, entry.size, crc, algorithm, where)
        return view
    # A bytearray filled in place: building bytes would cost one more copy of the whole file.
    buffer = bytearray(entry.size)
    crc = read_into(path, buffer, where=where, name=entry.name, algorithm=algorithm)
    _check(entry, entry.size, crc, algorithm, where)
    return memoryview(buffer)


def _verify_in_place(data: Location, entry: FileEntry, algorithm: str, where: str) -> None:
    path = _file_path(data, entry.name)
    assert path is not None
    size, crc = file_crc(path, algorithm=algorithm)
    _check(entry, size, crc, algorithm, where)


def load(location: Location, manifest: Manifest, *, into: str | None = None) -> Checkpoint:
    """Read a committed step and verify every file; `CheckpointError` names the first bad one."""
    step_location = location.join(step_folder(manifest.step))
    data = step_location.join(manifest.folder)
    where = f"{location.uri}: step {manifest.step}"
    files: dict[str, memoryview] = {}
    directory = data.path
    temporary = False
    copied: list[str] = []
    algorithm = manifest.checksum
    try:
        if manifest.kind != "directory":
            if data.path is None:
                files = get_buffers(data, manifest, where)
            for entry in manifest.files if data.path is not None else ():
                path = _file_path(data, entry.name)
                assert path is not None
                files[entry.name] = _read_local(path, data, entry, algorithm, where)
        elif location.atomic_rename and data.path is not None:
            for entry in manifest.files:
                _verify_in_place(data, entry, algorithm, where)
        else:
            # FUSE and gs:// copy to local disk once, checking as they go, rather than
            # verifying through the mount and then having the framework download it again.
            temporary = into is None
            directory = into or make_staging("restore")
            get_folder(data, manifest, directory, where, copied)
    except BaseException as e:
        if temporary and directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
        # A failed step must leave nothing in the caller's `into` folder: the fallback to
        # an older step would otherwise restore on top of this one's files.
        for target in copied if not temporary else ():
            with contextlib.suppress(FileNotFoundError):
                os.remove(target)
        if isinstance(e, CheckpointError) or not isinstance(e, (StorageError, OSError)):
            raise
        raise CheckpointError(
            f"cannot read a file the manifest names: {e}",
            source=where,
            hint="the step was damaged or deleted after it was committed",
        ) from e
    return Checkpoint(
        step=manifest.step,
        uri=step_location.uri,
        manifest=manifest,
        files=files,
        directory=directory,
        temporary=temporary,
    )
