"""`FuseLocation`: a Cloud Storage FUSE folder (`/gcs/BUCKET/...`), which is not POSIX.

Renames there are copy-and-delete and may fail for folders, so this location
says `atomic_rename = False` and writers publish with a commit marker written
last instead. Each file becomes an object when it is closed or fsynced, so
whole-file writes with large buffers are the fast path; small appends are slow.
"""

from __future__ import annotations

from vtrain.storage.local import LocalLocation


class FuseLocation(LocalLocation):
    """A folder on a Cloud Storage FUSE mount (or a local folder treated as one)."""

    atomic_rename = False
