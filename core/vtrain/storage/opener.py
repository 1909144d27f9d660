"""`open_location`: which `Location` a local path, a /gcs/ path or a gs:// URI gets.

A `gs://` URI goes through the Cloud Storage FUSE mount when the bucket is
mounted (as on every Vertex AI node), otherwise through the storage client; a
path under the mount root gets FUSE semantics (renames are copy-and-delete
there, so nothing may rely on them). The factory sits above the implementations,
not beside their base class, so that no implementation imports its own factory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from vtrain.errors import StorageError
from vtrain.storage.fuse import FuseLocation
from vtrain.storage.gcs import GcsLocation
from vtrain.storage.local import LocalLocation
from vtrain.storage.location import DEFAULT_GCS_MOUNT, Location, gcs_mount_root, split_gs_uri


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def open_location(
    uri_or_path: str | os.PathLike[str],
    *,
    gcs_mount: str | None = None,
    fuse: bool | None = None,
    environ: Mapping[str, str] | None = None,
    client: Any = None,
) -> Location:
    """A `Location` for `uri_or_path`: a local path, a file:// URL, a /gcs/ FUSE path or a
    gs:// URI.

    `gcs_mount` (else `VTRAIN_GCS_MOUNT`, else /gcs) is where gs:// buckets are
    mounted; `fuse=True` gives a local folder FUSE semantics (for tests),
    `fuse=False` insists on POSIX renames, or on the storage client for gs://.
    `client` is a `google.cloud.storage.Client` to reuse for gs://; `environ`
    (default `os.environ`) is read for the mount root and the client. An empty
    location or another scheme raises `StorageError`.
    """
    env = os.environ if environ is None else environ
    text = os.fspath(uri_or_path)
    mount = gcs_mount_root(gcs_mount, env)
    if not text:
        raise StorageError("empty location", value=text, expected="a path or a gs:// URI")
    if text.startswith("gs://"):
        bucket, prefix = split_gs_uri(text)
        mounted = os.path.join(mount, bucket)
        if fuse is not False and os.path.isdir(mounted):
            parts = prefix.split("/") if prefix else []
            return FuseLocation(os.path.join(mounted, *parts))
        return GcsLocation(bucket, prefix, client=client, environ=env)
    if text.startswith("file://"):
        text = text[len("file://") :]
    elif "://" in text:
        scheme = text.split("://", 1)[0]
        raise StorageError(
            "unsupported storage scheme",
            source=text,
            value=scheme,
            expected="a local path, a /gcs/ path, file:// or gs://",
        )
    path = os.path.abspath(os.path.expanduser(text))
    if fuse is None:
        # Under either root it is Cloud Storage FUSE: better slow and safe than trusting renames.
        fuse = _is_under(path, mount) or _is_under(path, DEFAULT_GCS_MOUNT)
    return FuseLocation(path) if fuse else LocalLocation(path)
