"""`Checkpoint`: one restored step, its files verified against the manifest."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType, TracebackType

from vtrain.checkpoints.manifest import BYTES_NAME, Manifest
from vtrain.errors import CheckpointError


@dataclass(frozen=True)
class Checkpoint:
    """A restored step: in-memory files for bytes and mapping saves, a folder for callables."""

    step: int
    """The step number it was saved as."""
    uri: str
    """The committed step folder it was read from."""
    manifest: Manifest
    """The step's manifest: what kind of save it was, and every file's size and checksum."""
    files: Mapping[str, memoryview]
    """Name -> content, for `save(step, bytes)` and `save(step, {name: bytes})`; else empty.

    Read-only memory maps for large files on a local disk, in-memory buffers
    elsewhere; compare them to bytes, slice them, or `bytes(view)` for a copy."""
    directory: str | None
    """A local folder holding the verified files: in place on a local disk or FUSE mount;
    for a callable's save on FUSE or gs://, a copy (the `into` folder, or a new temporary one)."""
    temporary: bool = False
    """True when `directory` is a temporary copy that `close()` removes."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", MappingProxyType(dict(self.files)))

    def close(self) -> None:
        """Remove the temporary copy, if restore made one; the files are gone afterwards."""
        if self.temporary and self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def data(self) -> memoryview:
        """The content of a `save(step, bytes)`."""
        if self.manifest.kind != "bytes":
            raise CheckpointError(
                "this checkpoint was not saved from bytes",
                source=self.uri,
                value=self.manifest.kind,
                expected="bytes; use .files for a mapping, .directory for a callable's folder",
            )
        return self.files[BYTES_NAME]
