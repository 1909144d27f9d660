"""A document's compare-and-set on Cloud Storage: an object written at the generation read.

The token is the object's generation (0: no object). `put` writes with
`if_generation_match`, so the server refuses a write, or a delete, at a generation
that is not the current one. It also compares the generation first: a store that
ignores preconditions (the emulator the tests run) still refuses a stale token; on
Cloud Storage the precondition closes the moment between the two.
"""

from __future__ import annotations

from typing import Any

from vtrain.errors import StorageError
from vtrain.storage.cas import CompareAndSet
from vtrain.storage.gcs_errors import api_errors

_RACES = 3  # reads again when the object was rewritten between its metadata and its bytes


class GcsCas(CompareAndSet):
    """The object `blob` (a google-cloud-storage Blob) as one document."""

    def __init__(self, blob: Any, where: str | None = None, name: str = "") -> None:
        self.blob = blob
        self.uri = f"gs://{blob.bucket.name}/{blob.name}"
        # What errors name: the location the document was asked of, and its name there.
        self.where, self.name = (where, name) if where else (self.uri, "")

    def get(self) -> tuple[bytes | None, object]:
        with api_errors("read", self.where, self.name):
            return self._get()

    def put(self, data: bytes | None, token: object) -> bool:
        with api_errors("write", self.where, self.name):
            return self._put(data, token)

    def _get(self) -> tuple[bytes | None, object]:
        from google.api_core.exceptions import NotFound, PreconditionFailed

        for _ in range(_RACES):
            generation = self._generation()
            if generation == 0:
                return None, 0
            try:
                data: bytes = self.blob.download_as_bytes(if_generation_match=generation)
            except NotFound:
                return None, 0
            except PreconditionFailed:
                continue  # rewritten between the two requests: read the new one
            return data, generation
        raise StorageError(
            "other processes keep rewriting it", source=self.uri, hint="stop the others"
        )

    def _put(self, data: bytes | None, token: object) -> bool:
        from google.api_core.exceptions import NotFound, PreconditionFailed

        generation = token if isinstance(token, int) else None
        if self._generation() != token:
            return False
        if data is None and generation == 0:
            return True  # nothing there to remove
        try:
            if data is None:
                self.blob.delete(if_generation_match=generation)
            else:
                kind = "application/json" if self.blob.name.endswith(".json") else None
                self.blob.upload_from_string(
                    data, content_type=kind, if_generation_match=generation
                )
        except PreconditionFailed:
            return False
        except NotFound:  # deleted by another writer first
            return False
        return True

    def _generation(self) -> int | None:
        """The object's generation; 0 when there is none, None where the store reports none
        (then a write is unchecked)."""
        blob = self.blob.bucket.get_blob(self.blob.name)
        if blob is None:
            return 0
        return None if blob.generation is None else int(blob.generation)
