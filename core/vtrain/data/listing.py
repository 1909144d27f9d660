"""Expanding a file pattern into the sorted files it names: a local glob, /gcs/, or gs://.

One matcher serves every medium, so a pattern names the same files on a disk, on
the FUSE mount and through the storage client: ``*`` and ``?`` stay inside one
path component, ``[abc]`` is a class, ``**`` spans folders. A pattern without
a wildcard names a file, or every file below a folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from vtrain.errors import StorageError
from vtrain.storage.location import Location, split_gs_uri
from vtrain.storage.opener import open_location

WILDCARDS = "*?["


def has_wildcard(text: str) -> bool:
    """True when `text` holds a wildcard character."""
    return any(c in text for c in WILDCARDS)


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """A regular expression for a '/'-separated pattern (see the module docstring)."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            inner = pattern[i + 1 : end]
            inner = "^" + inner[1:] if inner.startswith("!") else inner
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _split(pattern: str) -> tuple[str, str]:
    """(the literal folder above the first wildcard, the rest); the rest is "" without one."""
    parts = pattern.split("/")
    for at, part in enumerate(parts):
        if has_wildcard(part):
            return "/".join(parts[:at]), "/".join(parts[at:])
    return pattern, ""


def literal_folder(pattern: str) -> str:
    """The part of `pattern` above its first wildcard; without one, all of it less a closing '/'."""
    root, _ = _split(pattern.rstrip("/") if not has_wildcard(pattern) else pattern)
    return root or ("/" if pattern.startswith("/") else "")


def _location(
    pattern: str, environ: Mapping[str, str], gcs_mount: str | None, fuse: bool | None, client: Any
) -> Location:
    return open_location(
        literal_folder(pattern) or ".",
        gcs_mount=gcs_mount,
        fuse=fuse,
        environ=environ,
        client=client,
    )


def listed_folder(
    pattern: str,
    *,
    environ: Mapping[str, str],
    gcs_mount: str | None = None,
    fuse: bool | None = None,
    client: Any = None,
) -> str:
    """Where `expand` lists `pattern`: the folder (a path, or gs://BUCKET/KEY) that every file it
    names is below."""
    location = _location(pattern, environ, gcs_mount, fuse, client)
    return location.path if location.path is not None else location.uri


def expand(
    pattern: str,
    *,
    where: str,
    environ: Mapping[str, str],
    gcs_mount: str | None = None,
    fuse: bool | None = None,
    client: Any = None,
) -> list[str]:
    """The files `pattern` names, as paths or gs:// URIs, sorted by their name below the pattern's
    folder (the same order on every replica, whatever order the listing came in)."""
    root = literal_folder(pattern)
    rest = _split(pattern)[1] if has_wildcard(pattern) else ""
    if pattern.startswith("gs://") and has_wildcard(pattern[len("gs://") :].split("/")[0]):
        raise StorageError(
            "a wildcard in the bucket name",
            source=where,
            value=pattern,
            expected="gs://BUCKET/PATH with wildcards after the bucket",
        )
    location = _location(pattern, environ, gcs_mount, fuse, client)
    if location.path is not None:
        found = _walk(location.path, rest)
        return [
            os.path.join(location.path, *name.split("/")) if name else location.path
            for name in found
        ]
    return _list_gcs(root, rest, where, environ, client)


def _walk(folder: str, rest: str) -> list[str]:
    if not rest:
        if os.path.isfile(folder):
            return [""]
        rest = "**"
    regex = pattern_regex(rest)
    # Without '**' a match lies at a fixed depth: do not walk below it.
    depth = None if "**" in rest else rest.count("/")
    found: list[str] = []
    for current, dirs, files in os.walk(folder):
        rel = os.path.relpath(current, folder).replace(os.sep, "/")
        rel = "" if rel == "." else rel + "/"
        if depth is not None and rel.count("/") >= depth:
            dirs.clear()
        found.extend(rel + f for f in files if regex.fullmatch(rel + f))
    return sorted(found)


def _list_gcs(
    root: str, rest: str, where: str, environ: Mapping[str, str], client: Any
) -> list[str]:
    from vtrain.storage.gcs import GcsLocation

    bucket, key = split_gs_uri(root)
    if rest:
        regex = pattern_regex(f"{key}/{rest}" if key else rest)
        # The literal head of the first wildcard part narrows the listing ("training-").
        head = rest.split("/")[0]
        start = head[: min((head.find(c) for c in WILDCARDS if c in head), default=0)]
        start = f"{key}/{start}" if key else start
    else:  # one object, or every object below a folder
        regex = re.compile(re.escape(key) + "(?:/.*)?", re.DOTALL)
        start = key
    names = GcsLocation(bucket, "", client=client, environ=environ).list_objects(start)
    return [f"gs://{bucket}/{name}" for name in names if regex.fullmatch(name)]
