"""The size and generation of each listed file: how a position knows the files it was taken on.

A Cloud Storage object's generation changes whenever it is written; a file on
a disk or on the /gcs/ mount has its modification time (in nanoseconds) instead.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from vtrain.errors import StorageError
from vtrain.storage.location import split_gs_uri

Stat = tuple[int, str]
"""(size in bytes, generation)."""


def file_stats(names: Sequence[str], environ: Mapping[str, str], client: Any) -> list[Stat]:
    """(size, generation) of each of `names`: paths, /gcs/ paths or gs:// URIs."""
    objects = _object_stats([n for n in names if n.startswith("gs://")], environ, client)
    found: list[Stat] = []
    for name in names:
        if name.startswith("gs://"):
            if name not in objects:
                raise StorageError(
                    "listed, then gone: the split changed as it was listed", source=name
                )
            found.append(objects[name])
            continue
        try:
            stat = os.stat(name)
        except OSError as e:
            raise StorageError(f"cannot look it up: {e.strerror or e}", source=name) from e
        found.append((stat.st_size, str(stat.st_mtime_ns)))
    return found


def _object_stats(names: list[str], environ: Mapping[str, str], client: Any) -> dict[str, Stat]:
    """One listing per bucket, below the longest prefix the names share."""
    if not names:
        return {}
    from vtrain.storage.gcs import GcsLocation
    from vtrain.storage.gcs_errors import api_errors

    keys: dict[str, list[str]] = {}
    for name in names:
        bucket, key = split_gs_uri(name)
        keys.setdefault(bucket, []).append(key)
    found: dict[str, Stat] = {}
    for bucket, under in keys.items():
        prefix = os.path.commonprefix(under)
        location = GcsLocation(bucket, client=client, environ=environ)
        # As every gs:// operation: a refusal, or no credentials, in one StorageError.
        with api_errors("list", f"gs://{bucket}/{prefix}"):
            for blob in location.client.list_blobs(bucket, prefix=prefix):
                found[f"gs://{bucket}/{blob.name}"] = (int(blob.size), str(blob.generation))
    return found
