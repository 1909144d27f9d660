"""The emulator's storage for a rehearsed bucket, with the bucket's folder as its truth.

`gcp-storage-emulator` keeps each object's bytes in a file named after the
object (``<data>/.cloudstorage/BUCKET/NAME``, here a link to the job's
``<output>/gcs/BUCKET``) and its metadata in memory. The rehearsal's `/gcs/`
view is that folder, so a replica may write either way;
before every request `FolderStorage.reconcile` makes the metadata agree with
the folder: a file written, rewritten or removed through the view is an
object created, replaced or deleted, and a write through the API is only
recorded. The folder is never written here: a replica may be writing a file
through the view while the API reads it.

Only this module and `vtrain.local.bucket` import the emulator, and only when a
rehearsal's output is ``gs://``.
"""

from __future__ import annotations

import os
import time
from typing import Any

from gcp_storage_emulator import settings
from gcp_storage_emulator.handlers import buckets
from gcp_storage_emulator.handlers.objects import _checksums, _make_object_resource
from gcp_storage_emulator.storage import Storage

# A file changed again within the clock's tick keeps its size and mtime: a small one written
# this recently is hashed again at each request, so its metadata holds no stale checksums (a
# large one is not: a request must not read a checkpoint's gigabytes again).
_RECENT_SECONDS = 2.0
_RECENT_BYTES = 8 << 20


class FolderStorage(Storage):  # type: ignore[misc]
    """One bucket, served from its folder (`folder`) as the emulator keeps it on disk."""

    def __init__(self, data_dir: str, bucket: str, base_url: str, folder: str) -> None:
        super().__init__(use_memory_fs=False, data_dir=data_dir)
        # The emulator's own name for the bucket's folder is a link to `folder`: every path a
        # replica or the watcher sees resolves there, whichever way it was written.
        own = os.path.join(data_dir, settings.STORAGE_DIR, bucket)
        os.makedirs(folder, exist_ok=True)
        if not os.path.islink(own):
            os.symlink(folder, own)
        buckets.create_bucket(bucket, self)
        self.bucket = bucket
        self.base_url = base_url
        self.folder = folder
        # name -> (size, mtime_ns, inode) of its file when its metadata was last made or seen.
        self._seen: dict[str, tuple[int, int, int]] = {}
        for name in list(self.objects.get(bucket, {})):
            self._note(name)

    def create_file(self, bucket_name: str, file_name: str, content: bytes, *args: Any) -> None:
        if file_name.endswith("/"):
            # A "folder" placeholder (tf.io.gfile.makedirs, the console): on disk, a folder.
            os.makedirs(self._path(file_name), exist_ok=True)
            content = b""
            self.objects.setdefault(bucket_name, {})[file_name] = args[0]
            self._write_config_to_file()
            return
        super().create_file(bucket_name, file_name, content, *args)
        if bucket_name == self.bucket:
            self._note(file_name)

    def get_file(self, bucket_name: str, file_name: str, show_error: bool = True) -> bytes:
        if file_name.endswith("/") and os.path.isdir(self._path(file_name)):
            return b""
        return bytes(super().get_file(bucket_name, file_name, show_error))

    def reconcile(self) -> None:
        """Make the bucket's objects those of its folder: new and changed files, removed ones."""
        known = self.objects.setdefault(self.bucket, {})
        by_path = {_normal(name): name for name in known}
        found: set[str] = set()
        now = time.time()
        for top, _, files in os.walk(self.folder):
            for file in files:
                path = os.path.join(top, file)
                rel = os.path.relpath(path, self.folder).replace(os.sep, "/")
                try:
                    st = os.stat(path)
                except OSError:
                    continue  # removed between the listing and the look
                name = by_path.get(rel, rel)
                found.add(name)
                mark = (st.st_size, st.st_mtime_ns, st.st_ino)
                recent = st.st_size <= _RECENT_BYTES and now - st.st_mtime < _RECENT_SECONDS
                if name in known and self._seen.get(name) == mark and not recent:
                    continue
                self._describe(name, path, mark, known.get(name))
        for name in [n for n in known if n not in found]:
            if not (name.endswith("/") and os.path.isdir(self._path(name))):
                del known[name]
                self._seen.pop(name, None)

    def _describe(
        self, name: str, path: str, mark: tuple[int, int, int], old: dict[str, Any] | None
    ) -> None:
        try:
            with open(path, "rb") as f:
                content = f.read()
        except OSError:
            return
        obj = _make_object_resource(
            self.base_url, self.bucket, name, "application/octet-stream", len(content)
        )
        _checksums(content, obj)
        if old is not None and old.get("md5Hash") == obj["md5Hash"]:
            self._seen[name] = mark  # the same bytes: the same generation
            return
        self.objects[self.bucket][name] = obj
        self._seen[name] = mark

    def _note(self, name: str) -> None:
        try:
            st = os.stat(self._path(name))
        except OSError:
            return
        self._seen[name] = (st.st_size, st.st_mtime_ns, st.st_ino)

    def _path(self, name: str) -> str:
        return os.path.join(self.folder, *_normal(name).split("/"))


def _normal(name: str) -> str:
    """Where the emulator puts object `name` below its bucket's folder, '/'-separated."""
    return "/".join(p for p in name.replace("\\", "/").split("/") if p and p != ".")
