"""`Location`: one small interface over a local folder, a `/gcs/` FUSE folder and a `gs://` prefix.

Also the rules for the names of Cloud Storage places (`split_gs_uri`, `gcs_mount_root`).
`vtrain.storage.opener.open_location` picks the implementation.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, BinaryIO

from vtrain.errors import StorageError
from vtrain.storage.names import check_name, join_name

if TYPE_CHECKING:
    from typing_extensions import Buffer

    from vtrain.storage.cas import CompareAndSet

DEFAULT_GCS_MOUNT = "/gcs"
"""Where Cloud Storage FUSE mounts the buckets on Vertex AI: ``gs://b/p`` is ``/gcs/b/p``."""
GCS_MOUNT_VARIABLE = "VTRAIN_GCS_MOUNT"
"""The variable that moves the mount root elsewhere (a FUSE mount of your own, in a test)."""

# Bucket naming rules from the Cloud Storage documentation (dotted names may be longer).
_BUCKET = re.compile(r"[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]")


class Location(ABC):
    """A folder on some storage; every name below it is relative, '/'-separated and checked."""

    atomic_rename: bool = False
    """True where renaming a folder publishes it atomically (a local POSIX disk)."""
    checksum: str = "crc32"
    """The checksum checkpoint manifests record here: "crc32c" where the store keeps it itself."""
    transfers: int = 1
    """Files (or ranges of one) moved at once: more than one where each request waits on a
    round trip; on a disk or a mount one stream at a time is already as fast as it goes."""

    @property
    @abstractmethod
    def uri(self) -> str:
        """Where this folder is, as a user would write it (a path or a gs:// URI)."""

    @property
    def path(self) -> str | None:
        """The folder's path on a mounted file system, or None for an object store."""
        return None

    @abstractmethod
    def join(self, *names: str) -> Location:
        """The location of the subfolder at `names` (joined with '/', each one checked)."""

    @abstractmethod
    def open_read(self, name: str) -> BinaryIO:
        """Open the file `name` for streaming reads."""

    @abstractmethod
    def open_write(self, name: str) -> BinaryIO:
        """Open the file `name` for streaming writes; it is complete once closed."""

    @abstractmethod
    def read_bytes(self, name: str) -> bytes:
        """The whole content of the file `name`; a missing one raises `StorageError`."""

    @abstractmethod
    def write_bytes(self, name: str, data: Buffer) -> None:
        """Write `data` as the whole file `name`, durably (flushed to the medium before this
        returns)."""

    @abstractmethod
    def download_fileobj(self, name: str, fileobj: BinaryIO) -> None:
        """Stream the content of the file `name` into `fileobj`, a writable file object."""

    @abstractmethod
    def exists(self, name: str = "") -> bool:
        """True if `name` (or this folder, for "") is a file or a non-empty folder."""

    @abstractmethod
    def list(self, name: str = "") -> list[str]:
        """Sorted names of the files and folders directly inside the folder `name` ("": this one);
        [] if it is missing."""

    @abstractmethod
    def makedirs(self, name: str = "") -> None:
        """Create the folder `name` and its parents (nothing to do on an object store)."""

    @abstractmethod
    def remove(self, name: str = "") -> None:
        """Remove the file or the whole folder `name` ("": this one); a missing one is not an
        error."""

    @abstractmethod
    def upload(self, local_path: str, name: str = "") -> None:
        """Copy the local file or folder at `local_path` to `name` ("": this folder)."""

    @abstractmethod
    def download(self, name: str, local_path: str) -> None:
        """Copy the file or folder `name` to `local_path` on the local disk."""

    @abstractmethod
    def cas(self, name: str) -> CompareAndSet:
        """The compare-and-set of the small file `name` in this folder (storage/cas.py)."""

    def write_checked(self, name: str, data: Buffer, checksum: int) -> None:
        """`write_bytes` of `data` to `name`, where a store that keeps checksums (of the kind
        `checksum` names, on the class) refuses bytes whose checksum is not the argument."""
        self.write_bytes(name, data)

    def upload_checked(self, local_path: str, name: str, checksum: int) -> None:
        """`upload` of the one file `local_path` to `name`, where a store that keeps checksums
        refuses a file whose checksum is not `checksum`."""
        self.upload(local_path, name)

    def stored_checksums(self, name: str = "") -> dict[str, tuple[int, int]] | None:
        """(size, checksum) of every file below `name`, as the store keeps them; None if it
        keeps none (a disk or a mount: the bytes must be read to know)."""
        return None

    def read_range(self, name: str, start: int, end: int) -> bytes:
        """Bytes [`start`, `end`) of the file `name`."""
        with self.open_read(name) as f:
            f.seek(start)
            return f.read(end - start)

    def _check(self, name: str, what: str = "name") -> str:
        return check_name(name, where=self.uri, what=what) if name else ""

    def _file(self, name: str) -> str:
        if not name:
            raise StorageError(
                "a file name is needed here",
                source=self.uri,
                value=name,
                expected="a relative path such as 'model.pt'",
            )
        return check_name(name, where=self.uri)

    def _child(self, *names: str) -> str:
        name = join_name(*names)
        return self._check(name) if name else ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.uri!r})"

    def __str__(self) -> str:
        return self.uri


def gcs_mount_root(gcs_mount: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The Cloud Storage FUSE mount root: `gcs_mount`, else VTRAIN_GCS_MOUNT in `environ`
    (default `os.environ`), else /gcs; made absolute."""
    env = os.environ if environ is None else environ
    return os.path.abspath(gcs_mount or env.get(GCS_MOUNT_VARIABLE) or DEFAULT_GCS_MOUNT)


BUCKET_RULE = (
    "3 to 63 lowercase letters, digits, '-', '_' or '.' (up to 222 with dots, 63 between "
    "them), starting and ending with a letter or digit"
)


def bucket_problem(name: str) -> str | None:
    """Which of Cloud Storage's bucket-name rules `name` breaks ("is 1 character long"); None."""
    longest = 222 if "." in name else 63
    if not 3 <= len(name) <= longest:
        return f"is {len(name)} character{'s' * (len(name) != 1)} long"
    if not _BUCKET.fullmatch(name):
        if not re.fullmatch(r"[a-z0-9._-]+", name):
            return "holds a character other than lowercase letters, digits, '-', '_' and '.'"
        return "does not start and end with a letter or digit"
    if any(not part or len(part) > 63 for part in name.split(".")):
        return "has an empty part, or one over 63 characters, between its dots"
    return None


def split_gs_uri(uri: str) -> tuple[str, str]:
    """(bucket, object prefix) of the gs:// `uri`; the prefix has no leading or trailing '/'.

    Raises `StorageError` when `uri` is not a gs:// URI, its bucket breaks Cloud Storage's
    naming rules, or its object path holds a name vtrain refuses.
    """
    if not uri.startswith("gs://"):
        raise StorageError("not a gs:// URI", value=uri, expected="gs://BUCKET/PATH")
    bucket, _, prefix = uri[len("gs://") :].partition("/")
    why = bucket_problem(bucket)
    if why is not None:
        raise StorageError(
            f"not a Cloud Storage bucket name: it {why}",
            source=uri,
            value=bucket,
            expected=BUCKET_RULE,
        )
    prefix = prefix.rstrip("/")
    if prefix:
        check_name(prefix, where=uri, what="object path")
    return bucket, prefix
