"""`GcsLocation`: a `gs://BUCKET/prefix` reached through the google-cloud-storage client.

The client is imported inside functions, so the core stays standard-library
only; a missing package raises `MissingExtraError` naming the `gcs` extra.
With `STORAGE_EMULATOR_HOST` set, the client talks to that emulator with
anonymous credentials, as the emulator expects. Without credentials, every
operation ends in one `StorageError` that names the location and the ways to
get some, not in google.auth's traceback.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

from vtrain.errors import MissingExtraError, StorageError
from vtrain.storage.files import CHUNK, walk_files
from vtrain.storage.gcs_errors import NAME, api_errors, google_exceptions, no_credentials
from vtrain.storage.location import Location
from vtrain.storage.names import join_name

if TYPE_CHECKING:
    from typing_extensions import Buffer

    from vtrain.storage.cas import CompareAndSet

EMULATOR_VARIABLE = "STORAGE_EMULATOR_HOST"
EMULATOR_PROJECT = "vtrain-emulator"


def _storage() -> Any:
    try:
        from google.cloud import storage  # type: ignore[attr-defined,import-untyped,unused-ignore]
    except ImportError as e:
        raise MissingExtraError(NAME, "gcs", module="google.cloud.storage") from e
    return storage


def storage_client(environ: Mapping[str, str] | None = None, *, where: str = NAME) -> Any:
    """A `google.cloud.storage.Client`; anonymous, against the emulator when `environ`
    (default `os.environ`) sets STORAGE_EMULATOR_HOST.

    Without the `gcs` extra it raises `MissingExtraError`; without credentials, a
    `StorageError` that names `where` (a gs:// URI) and the ways to get some.
    """
    env = os.environ if environ is None else environ
    storage = _storage()
    host = env.get(EMULATOR_VARIABLE)
    if host:
        from google.auth.credentials import AnonymousCredentials

        if "://" not in host:
            host = f"http://{host}"
        return storage.Client(
            project=env.get("GOOGLE_CLOUD_PROJECT") or EMULATOR_PROJECT,
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call,unused-ignore]
            client_options={"api_endpoint": host},
        )
    try:
        return storage.Client()
    except google_exceptions("auth").GoogleAuthError as e:  # none found, or a key file unreadable
        raise no_credentials(where) from e


def _encode_crc32c(value: int) -> str:
    import base64

    return base64.b64encode(value.to_bytes(4, "big")).decode()


def _decode_crc32c(text: str) -> int:
    import base64

    return int.from_bytes(base64.b64decode(text), "big")


class GcsLocation(Location):
    """A prefix in a Cloud Storage bucket; folders are name prefixes, writes are whole objects.

    `bucket` and `prefix` say where (`split_gs_uri` splits a gs:// URI into them). `client`
    is a `google.cloud.storage.Client` to share, else one is made on first use from
    `environ` (default `os.environ`: STORAGE_EMULATOR_HOST and the credentials).
    """

    atomic_rename = False
    checksum = "crc32c"
    transfers = 8

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        client: Any = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.bucket_name = bucket
        self.prefix = prefix.strip("/")
        self._client = client
        self._environ = dict(os.environ if environ is None else environ)

    @property
    def uri(self) -> str:
        return f"gs://{self.bucket_name}/{self.prefix}".rstrip("/")

    @property
    def client(self) -> Any:
        """The storage client, made on first use."""
        if self._client is None:
            self._client = storage_client(self._environ, where=self.uri)
        return self._client

    def _key(self, name: str) -> str:
        return join_name(self.prefix, self._check(name))

    def _blob(self, name: str) -> Any:
        return self.client.bucket(self.bucket_name).blob(join_name(self.prefix, self._file(name)))

    def join(self, *names: str) -> GcsLocation:
        key = self._key(self._child(*names))
        # Children share one client: making one per folder would redo credential discovery.
        return GcsLocation(self.bucket_name, key, client=self.client, environ=self._environ)

    def open_read(self, name: str) -> BinaryIO:
        with api_errors("open for reading", self.uri, name):
            reader: BinaryIO = self._blob(name).open("rb", chunk_size=CHUNK)
            return reader

    def open_write(self, name: str) -> BinaryIO:
        with api_errors("open for writing", self.uri, name):
            writer: BinaryIO = self._blob(name).open("wb", chunk_size=CHUNK, ignore_flush=True)
            return writer

    def read_bytes(self, name: str) -> bytes:
        with api_errors("read", self.uri, name):
            data: bytes = self._blob(name).download_as_bytes()
            return data

    def write_bytes(self, name: str, data: Buffer) -> None:
        # BytesIO shares a bytes object's memory instead of copying it: find the bytes under a view.
        view = memoryview(data)
        under = view.obj
        raw = under if isinstance(under, bytes) and view.nbytes == len(under) else view.tobytes()
        with api_errors("write", self.uri, name):
            self._blob(name).upload_from_file(io.BytesIO(raw), size=len(raw))

    def download_fileobj(self, name: str, fileobj: BinaryIO) -> None:
        with api_errors("read", self.uri, name):
            self._blob(name).download_to_file(fileobj)

    def write_checked(self, name: str, data: Buffer, checksum: int) -> None:
        view = memoryview(data)
        under = view.obj
        raw = under if isinstance(under, bytes) and view.nbytes == len(under) else view.tobytes()
        blob = self._blob(name)
        # Sent with the object: the server computes its own CRC32C and refuses the upload
        # when they differ, so a byte damaged on the way never lands.
        blob.crc32c = _encode_crc32c(checksum)
        with api_errors("write", self.uri, name):
            blob.upload_from_file(io.BytesIO(raw), size=len(raw), checksum=None)

    def upload_checked(self, local_path: str, name: str, checksum: int) -> None:
        blob = self._blob(name)
        blob.crc32c = _encode_crc32c(checksum)
        with api_errors("upload", self.uri, name):
            blob.upload_from_filename(local_path, checksum=None)

    def stored_checksums(self, name: str = "") -> dict[str, tuple[int, int]]:
        key = self._key(name)
        start = len(key) + 1 if key else 0
        found = {}
        with api_errors("list", self.uri, name):
            for blob in self._list_prefix(name, delimiter=None):
                if blob.crc32c is not None:
                    found[blob.name[start:]] = (int(blob.size), _decode_crc32c(blob.crc32c))
        return found

    def read_range(self, name: str, start: int, end: int) -> bytes:
        with api_errors("read", self.uri, name):
            # checksum=None: a range has no server hash to check; the caller checks the whole.
            blob = self._blob(name)
            data: bytes = blob.download_as_bytes(start=start, end=end - 1, checksum=None)
            return data

    def _list_prefix(self, name: str, *, delimiter: str | None) -> Any:
        key = self._key(name)
        return self.client.list_blobs(
            self.bucket_name, prefix=f"{key}/" if key else "", delimiter=delimiter
        )

    def list_objects(self, start: str = "") -> list[str]:
        """Sorted names, below this prefix, of every object whose name begins with `start`.

        `start` is a raw name prefix ("data/training-"), not a folder; the listing is
        recursive and skips folder placeholders. `vtrain.data` expands patterns with it.
        """
        key = f"{self.prefix}/" if self.prefix else ""
        with api_errors("list", self.uri, start):
            blobs = self.client.list_blobs(self.bucket_name, prefix=key + start)
            names = [b.name[len(key) :] for b in blobs if not b.name.endswith("/")]
        return sorted(names)

    def exists(self, name: str = "") -> bool:
        with api_errors("look up", self.uri, name):
            if name and self._blob(name).exists():
                return True
            return any(True for _ in self._list_prefix(name, delimiter=None))

    def list(self, name: str = "") -> list[str]:
        key = self._key(name)
        start = len(key) + 1 if key else 0
        with api_errors("list", self.uri, name):
            pages = self._list_prefix(name, delimiter="/")
            names = {blob.name[start:] for blob in pages}
            names |= {p[start:].rstrip("/") for p in pages.prefixes}
        names.discard("")  # a "folder/" placeholder object is the folder itself
        return sorted(names)

    def cas(self, name: str) -> CompareAndSet:
        from vtrain.storage.cas_gcs import GcsCas

        return GcsCas(self._blob(name), self.uri, name)

    def makedirs(self, name: str = "") -> None:
        self._check(name)  # object stores have no folders; only the name is checked

    def remove(self, name: str = "") -> None:
        exceptions = google_exceptions()
        with api_errors("remove", self.uri, name):
            blobs = list(self._list_prefix(name, delimiter=None))
            if name:
                blobs.append(self._blob(name))
            for blob in blobs:
                with contextlib.suppress(exceptions.NotFound):
                    blob.delete()

    def upload(self, local_path: str, name: str = "") -> None:
        with api_errors("upload", self.uri, name):
            if os.path.isdir(local_path):
                for rel in walk_files(local_path):
                    path = os.path.join(local_path, *rel.split("/"))
                    self._blob(join_name(name, rel)).upload_from_filename(path)
            else:
                self._blob(name).upload_from_filename(local_path)

    def download(self, name: str, local_path: str) -> None:
        with api_errors("download", self.uri, name):
            if name and self._blob(name).exists():
                os.makedirs(os.path.dirname(os.path.abspath(local_path)), exist_ok=True)
                self._blob(name).download_to_filename(local_path)
                return
            key = self._key(name)
            start = len(key) + 1 if key else 0
            found = False
            for blob in self._list_prefix(name, delimiter=None):
                if blob.name.endswith("/"):
                    continue  # a folder placeholder, as the console and gcsfuse create
                rel = self._check(blob.name[start:], "object name")
                target = os.path.join(local_path, *rel.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                blob.download_to_filename(target)
                found = True
            if not found:
                raise StorageError("nothing to download", source=self.uri, path=name or None)
