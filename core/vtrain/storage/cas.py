"""`CompareAndSet`: one small document that a writer replaces only at the version it read.

The shape of torch elastic's rendezvous stores: `get` hands back the document and a
token for its version, `put` writes only while that token is still the current one,
so of two writers that read the same version one wins and the other reads again.
`Location.cas(name)` gives the implementation of each store: a mounted folder
(cas_folder.py) or a Cloud Storage object (cas_gcs.py). The checkpoint folder's
writer lease is its user.
"""

from __future__ import annotations

from abc import ABC, abstractmethod


class CompareAndSet(ABC):
    """One document's compare-and-set; a store's own errors (OSError, the client's) pass."""

    uri: str
    """Where the document is, as a user would write it."""

    @abstractmethod
    def get(self) -> tuple[bytes | None, object]:
        """(the document, None when there is none; the token of the version read)."""

    @abstractmethod
    def put(self, data: bytes | None, token: object) -> bool:
        """Replace the document with `data` (None removes it) if the version `token` names is
        still the current one; False when another writer changed it since."""
