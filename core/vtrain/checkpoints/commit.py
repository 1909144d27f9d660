"""Writing and deleting steps with the commit protocol the medium allows.

On a local POSIX disk a step is built in a temporary folder, fsynced, and
renamed into place: the step appears whole or not at all. On Cloud Storage
FUSE and on gs://, renames are copy-and-delete, so the files are written into
a fresh data folder and the commit marker (the manifest) is written last: until
that one object exists, readers do not see the step. Deletion runs the other
way round, marker first, so a half-deleted step is never taken for a whole one.

A step folder that is a symbolic link (an old run's step linked in for a warm
start) is someone else's data: it is read through, but a save or a delete of
that step replaces or removes the link alone, never writing through it.
"""

from __future__ import annotations

import os
import shutil
import time

from vtrain.checkpoints.checksums import CRC32
from vtrain.checkpoints.layout import (
    DELETE_PREFIX,
    MARKER,
    TMP_PREFIX,
    new_data_folder,
    step_folder,
    token,
)
from vtrain.checkpoints.manifest import FileEntry, Manifest
from vtrain.checkpoints.payload import Payload
from vtrain.checkpoints.streams import file_crc, write_file
from vtrain.checkpoints.transfer import put_buffers, put_paths
from vtrain.errors import CheckpointError
from vtrain.storage.files import fsync_dir, os_errors, walk_files
from vtrain.storage.local import LocalLocation
from vtrain.storage.location import Location
from vtrain.storage.staging import staging_prefix


def save_step(location: Location, step: int, payload: Payload, *, fresh: bool = False) -> Manifest:
    """Write `payload` as `step` under `location` and commit it; return its manifest.

    `fresh` says the step folder held nothing before (the caller cleaned up and
    never saved this step), which spares an object store one listing per save.
    """
    try:
        if _unlink_if_link(location, step):
            fresh = True
        if location.atomic_rename and location.path is not None:
            with os_errors("save a checkpoint", location.uri, step_folder(step)):
                return _save_by_rename(location.path, step, payload)
        return _save_with_marker(location, step, payload, fresh=fresh)
    finally:
        if payload.staged is not None:
            shutil.rmtree(payload.staged, ignore_errors=True)


def linked(location: Location, step: int) -> bool:
    """True when the step's folder is a symbolic link (to another run's step)."""
    return location.path is not None and os.path.islink(
        os.path.join(location.path, step_folder(step))
    )


def _unlink_if_link(location: Location, step: int) -> bool:
    if not linked(location, step):
        return False
    assert location.path is not None
    with os_errors("replace a linked checkpoint", location.uri, step_folder(step)):
        os.remove(os.path.join(location.path, step_folder(step)))
    return True


def delete_step(location: Location, step: int) -> None:
    """Remove a step so that no reader ever sees it half there."""
    name = step_folder(step)
    if _unlink_if_link(location, step):
        return
    if location.atomic_rename and location.path is not None:
        root = location.path
        doomed = os.path.join(root, f"{DELETE_PREFIX}{name}-{token()}")
        with os_errors("delete a checkpoint", location.uri, name):
            try:
                os.rename(os.path.join(root, name), doomed)
            except FileNotFoundError:
                return
            fsync_dir(root)
            shutil.rmtree(doomed, ignore_errors=True)
        return
    step_location = location.join(name)
    step_location.remove(MARKER)  # first: from here on the step no longer counts
    step_location.remove()


def _write_files(target: Location, payload: Payload) -> list[FileEntry]:
    if target.path is None:
        return put_buffers(target, payload.files)
    entries = []
    root = target.path
    for name, view in payload.files.items():
        with os_errors("write", target.uri, name):
            value = write_file(os.path.join(root, *name.split("/")), view)
        entries.append(FileEntry(name, len(view), value))
    return entries


def call_writer(payload: Payload, folder: str, where: str) -> list[str]:
    """Run a payload's writer into a local folder; the names of the files it wrote."""
    assert payload.writer is not None
    payload.writer(folder)
    names = walk_files(folder)
    if not names:
        raise CheckpointError(
            "the save callable wrote no files",
            source=where,
            value=folder,
            expected="at least one file written into the folder passed to it",
        )
    return names


def _manifest(
    step: int, payload: Payload, folder: str, entries: list[FileEntry], algorithm: str
) -> Manifest:
    return Manifest(step, payload.kind, folder, tuple(entries), time.time(), algorithm)


def _fsync_tree(root: str) -> None:
    for folder, _, _ in os.walk(root, topdown=False):
        fsync_dir(folder)


def _save_by_rename(root: str, step: int, payload: Payload) -> Manifest:
    name = step_folder(step)
    final = os.path.join(root, name)
    os.makedirs(root, exist_ok=True)
    if os.path.lexists(final):
        return _replace_in_place(final, step, payload)
    tmp = os.path.join(root, f"{TMP_PREFIX}{name}-{token()}")
    folder = new_data_folder()
    data = os.path.join(tmp, folder)
    os.mkdir(tmp)
    try:
        entries = _write_local(data, payload, where=f"{root}: step {step}")
        manifest = _manifest(step, payload, folder, entries, CRC32)
        LocalLocation(tmp).write_bytes(MARKER, manifest.to_marker())
        _fsync_tree(tmp)  # every name durable before the rename publishes them
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    fsync_dir(root)
    return manifest


def _write_local(data: str, payload: Payload, where: str) -> list[FileEntry]:
    if payload.staged is not None:
        os.rename(payload.staged, data)  # staged on the same disk, beside the step
        names = walk_files(data)
    else:
        os.mkdir(data)
        if payload.writer is None:
            return _write_files(LocalLocation(data), payload)
        names = call_writer(payload, data, where)
    entries = []
    for rel in names:
        size, crc = file_crc(os.path.join(data, *rel.split("/")), sync=True)
        entries.append(FileEntry(rel, size, crc))
    return entries


def _replace_in_place(final: str, step: int, payload: Payload) -> Manifest:
    # A step saved again (a restarted replica re-saving the step it resumed from): the old
    # files stay valid until an atomic rename swaps the marker, then they are removed.
    folder = new_data_folder()
    data = os.path.join(final, folder)
    marker_tmp = os.path.join(final, f"{TMP_PREFIX}{MARKER}-{token()}")
    try:
        entries = _write_local(data, payload, where=f"{final}: step {step}")
        manifest = _manifest(step, payload, folder, entries, CRC32)
        _fsync_tree(data)
        LocalLocation(final).write_bytes(os.path.basename(marker_tmp), manifest.to_marker())
        os.replace(marker_tmp, os.path.join(final, MARKER))
    except BaseException:
        shutil.rmtree(data, ignore_errors=True)
        if os.path.exists(marker_tmp):
            os.remove(marker_tmp)
        raise
    fsync_dir(final)
    _remove_others(LocalLocation(final), keep=(MARKER, folder))
    return manifest


def _remove_others(step_location: Location, keep: tuple[str, ...]) -> None:
    for entry in step_location.list():
        if entry not in keep:
            step_location.remove(entry)


def _save_with_marker(location: Location, step: int, payload: Payload, *, fresh: bool) -> Manifest:
    name = step_folder(step)
    step_location = location.join(name)
    folder = new_data_folder()
    data = step_location.join(folder)
    data.makedirs()
    try:
        if payload.writer is None and payload.staged is None:
            entries = _write_files(data, payload)
        else:
            entries = _upload_written(data, payload, where=f"{location.uri}: step {step}")
    except BaseException:
        data.remove()  # uncommitted and unreferenced: not worth leaving for the next cleanup
        raise
    manifest = _manifest(step, payload, folder, entries, location.checksum)
    # The marker goes last: on gs:// and on gcsfuse an object appears whole, when it is
    # complete, so the step is committed at once. (A local folder only *treated* as FUSE
    # overwrites a re-saved step's marker in place; a kill there loses that step.)
    step_location.write_bytes(MARKER, manifest.to_marker())
    if not fresh:
        _remove_others(step_location, keep=(MARKER, folder))
    return manifest


def _upload_written(target: Location, payload: Payload, where: str) -> list[FileEntry]:
    # The writer writes to local disk first: frameworks write in small pieces, which are
    # slow on gcsfuse, and reading back through the mount to checksum would download again.
    if payload.staged is not None:
        return put_paths(target, payload.staged, walk_files(payload.staged))
    import tempfile  # here, not at the top: `import vtrain` stays light

    # Named for this process: a kill leaves it behind, and the next start removes it.
    with tempfile.TemporaryDirectory(prefix=staging_prefix("save")) as tmp:
        return put_paths(target, tmp, call_writer(payload, tmp, where))
