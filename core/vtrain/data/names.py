"""How a data position names a split's files: below the pattern's folder, never by a full path.

A replica lists a relative pattern (``data/*.jsonl``) from its working folder,
and that folder differs from replica to replica (each has its own disk in a
rehearsal) and from run to run. A position holds for every replica of every
run, so it records the pattern's folder as the pattern spells it, and each file
by its name below that folder: the same on every replica, whatever its working
folder, and comparable however another run spells the folder.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping

from vtrain.data.listing import literal_folder

Row = tuple[int, str]
"""(size in bytes, generation) of a listed file."""


def pattern_root(pattern: str) -> str:
    """The folder above `pattern`'s first wildcard, spelled one way: ``./data//x-*`` and
    ``data/x-*`` both give ``data``; ``.`` is the working folder. A pattern without a
    wildcard is its own root (a file, or a folder of files)."""
    head = literal_folder(pattern)
    if pattern.startswith("gs://"):
        return head.rstrip("/")  # an object's name is no path: "." and ".." are names there
    scheme = "file://" if pattern.startswith("file://") else ""
    return scheme + posixpath.normpath(head[len(scheme) :] or ".")


def name_below(folder: str, path: str) -> str:
    """`path`, listed in `folder` (a path, or a gs:// URI), named below it, '/'-separated;
    "" when the folder is itself the one file listed."""
    if path == folder:
        return ""
    inside = folder.rstrip("/") + "/"
    if not path.startswith(inside):
        raise ValueError(f"{path!r} is not below {folder!r}")
    return path[len(inside) :]


def shown(root: str, name: str) -> str:
    """A file of a position as a user reads it: the pattern's folder, then its name below."""
    if not name:
        return root
    return name if root == "." else f"{root.rstrip('/')}/{name}"


def recorded_names(root: str, rows: Mapping[str, Row], folder: str) -> dict[str, Row]:
    """A position's file rows keyed by their name below this listing's `folder`.

    A position names its files below its `root`. A relative root is the pattern's
    folder as it was spelled, found again wherever the pattern is listed: the names
    stand as they are. So does an absolute one that is not this `folder` (data moved
    with its names). One this `folder` holds (an older vtrain recorded the absolute
    folder its files shared, deeper than the pattern's) is read below `folder`.
    """
    if root.startswith(("/", "gs://")) and root.rstrip("/") != folder.rstrip("/"):
        full = {shown(root, name): row for name, row in rows.items()}
        try:
            return {name_below(folder, path): row for path, row in full.items()}
        except ValueError:
            pass
    return dict(rows)


def names_below(folder: str, paths: Iterable[str]) -> tuple[str, ...]:
    """Each of `paths`, listed in `folder`, named below it (see `name_below`)."""
    return tuple(name_below(folder, path) for path in paths)
