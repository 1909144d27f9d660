"""The manifest a commit marker holds: every file's name, size and checksum.

A CRC (CRC-32, or CRC32C on Cloud Storage; see `checksums`) rather than SHA-256:
it runs at two to eight times the speed, it catches truncation, torn writes and
flipped bits, and a cryptographic hash would buy nothing: whoever can rewrite the
files can rewrite the manifest beside them. The marker carries a CRC of its own
manifest, so a marker cut short or edited by hand reads as "not committed".
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vtrain.checkpoints.checksums import ALGORITHMS, CRC32
from vtrain.checkpoints.layout import check_data_folder, check_step
from vtrain.errors import CheckpointError, StorageError
from vtrain.storage.names import check_name

FORMAT = "vtrain.checkpoint/1"
KINDS = ("bytes", "files", "directory")
"""What `save` was given: bytes, a mapping of names to bytes, or a callable writing a folder."""
BYTES_NAME = "data"
"""The one file of a `bytes` checkpoint."""
_HEX8 = re.compile(r"[0-9a-f]{8}")


@dataclass(frozen=True)
class FileEntry:
    """One file of a checkpoint, as the manifest records it."""

    name: str
    """The file's '/'-separated name inside the step's data folder."""
    size: int
    """The file's length in bytes."""
    checksum: int
    """The file's CRC, of the manifest's `checksum` algorithm."""


@dataclass(frozen=True)
class Manifest:
    """What a committed step holds; its marker is written after every file it names."""

    step: int
    """The step number, from 0 to 10**12 - 1."""
    kind: str
    """What `save` was given: "bytes", "files" (a mapping of names to bytes) or "directory"."""
    folder: str
    """The step's data folder (``data-`` and 16 hex digits), beside the marker."""
    files: tuple[FileEntry, ...]
    """Every file of the step, with its size and checksum."""
    created: float
    """When the step was committed, in seconds since the epoch."""
    checksum: str = CRC32
    """The algorithm of every file's checksum: "crc32", or "crc32c" on Cloud Storage."""

    @property
    def size(self) -> int:
        """Total bytes of the files."""
        return sum(f.size for f in self.files)

    def entry(self, name: str) -> FileEntry:
        """The entry for one file name; `CheckpointError` if there is none."""
        for f in self.files:
            if f.name == name:
                return f
        raise CheckpointError(
            "no such file in the checkpoint",
            source=f"step {self.step}",
            value=name,
            expected="one of " + ", ".join(repr(f.name) for f in self.files),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form stored in the marker."""
        return {
            "format": FORMAT,
            "step": self.step,
            "kind": self.kind,
            "folder": self.folder,
            "checksum": self.checksum,
            "created": self.created,
            "files": [
                {"name": f.name, "size": f.size, self.checksum: f"{f.checksum:08x}"}
                for f in self.files
            ],
        }

    def to_marker(self) -> bytes:
        """The commit marker: the manifest and a CRC of its canonical JSON."""
        body = _canonical(self.to_dict())
        marker = {"manifest": self.to_dict(), "manifest_crc32": f"{zlib.crc32(body):08x}"}
        return json.dumps(marker, indent=1, sort_keys=True).encode() + b"\n"

    @classmethod
    def from_marker(cls, data: bytes, where: str) -> Manifest:
        """Parse and check the commit marker `data`, read from `where` (named in errors);
        `CheckpointError` says what is wrong with it."""
        try:
            marker = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise CheckpointError(
                f"commit marker is not JSON ({e})", source=where, expected="a complete marker"
            ) from e
        if not isinstance(marker, dict) or not isinstance(marker.get("manifest"), dict):
            raise _bad(where, "marker", marker, "an object with a 'manifest' object")
        manifest = marker["manifest"]
        crc = f"{zlib.crc32(_canonical(manifest)):08x}"
        if marker.get("manifest_crc32") != crc:
            raise _bad(where, "manifest_crc32", marker.get("manifest_crc32"), f"{crc!r}")
        return cls.from_dict(manifest, where)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str) -> Manifest:
        """Build from `d`, the marker's manifest object read from `where`, checking every
        field and name; `CheckpointError` says what is wrong with it."""
        if d.get("format") != FORMAT:
            raise _bad(where, "format", d.get("format"), repr(FORMAT))
        algorithm = d.get("checksum")
        if algorithm not in ALGORITHMS:
            raise _bad(where, "checksum", algorithm, " or ".join(map(repr, ALGORITHMS)))
        if d.get("kind") not in KINDS:
            raise _bad(where, "kind", d.get("kind"), " or ".join(KINDS))
        created = d.get("created")
        if isinstance(created, bool) or not isinstance(created, (int, float)):
            raise _bad(where, "created", created, "a timestamp")
        raw_files = d.get("files")
        if not isinstance(raw_files, list):
            raise _bad(where, "files", raw_files, "a list")
        files = tuple(_entry(f, algorithm, where) for f in raw_files)
        names = [f.name for f in files]
        if len(set(names)) != len(names):
            raise _bad(where, "files", names, "unique names")
        if d["kind"] == "bytes" and names != [BYTES_NAME]:
            raise _bad(where, "files", names, f"exactly [{BYTES_NAME!r}] for a bytes checkpoint")
        return cls(
            step=check_step(d.get("step"), where),
            kind=d["kind"],
            folder=check_data_folder(d.get("folder"), where),
            files=files,
            created=float(created),
            checksum=algorithm,
        )


def _canonical(d: Any) -> bytes:
    return json.dumps(d, sort_keys=True, separators=(",", ":")).encode()


def _bad(where: str, field: str, value: Any, expected: str) -> CheckpointError:
    return CheckpointError(
        f"commit marker has a bad {field!r}", source=where, value=value, expected=expected
    )


def _entry(raw: Any, algorithm: str, where: str) -> FileEntry:
    if not isinstance(raw, dict):
        raise _bad(where, "files", raw, f"objects with name, size and {algorithm}")
    name = raw.get("name")
    size = raw.get("size")
    crc = raw.get(algorithm)
    if not isinstance(name, str):
        raise _bad(where, "name", name, "a string")
    try:
        check_name(name, where=where, what="file name in the manifest")
    except StorageError as e:
        # A name that would climb out of the step folder makes the whole marker untrustworthy.
        raise CheckpointError(e.problem, source=where, value=name, expected=e.expected) from e
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise _bad(where, "size", size, "a non-negative int")
    if not isinstance(crc, str) or not _HEX8.fullmatch(crc):
        raise _bad(where, algorithm, crc, "8 hex digits")
    return FileEntry(name=name, size=size, checksum=int(crc, 16))
