"""One group's entry points, read from the installed distributions without importlib.metadata.

importlib.metadata gives the same answer, but importing it costs about 75 ms of
CPU (it brings the e-mail parser, for metadata this never reads): more than the
rest of vtrain, and every replica of every job pays it before its first step.
The format is small (the packaging spec's entry_points.txt: INI sections of
`name = module:attr [extras]`), and the search is importlib.metadata's own for
folders on sys.path: each folder's *.dist-info and *.egg-info, in order, the
first distribution of a name hiding later ones. Distributions that only a
custom import finder can see (zipped eggs) are not searched.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# importlib.metadata's EntryPoint.pattern: the object reference, then optional extras.
_REFERENCE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")
_INFO_SUFFIXES = (".dist-info", ".egg-info")


@dataclass(frozen=True)
class EntryPoint:
    """`name = value` of distribution `dist` (its name as its folder spells it)."""

    name: str
    value: str
    dist: str

    def load(self) -> Any:
        """Import the module and return the object the value names, as importlib.metadata does."""
        match = _REFERENCE.match(self.value)
        if match is None:
            raise ValueError(f"not an object reference: {self.value!r}")
        loaded: Any = importlib.import_module(match.group("module"))
        attrs = filter(None, (match.group("attr") or "").split("."))
        return functools.reduce(getattr, attrs, loaded)


def normalize(name: str) -> str:
    """A distribution's name as importlib.metadata compares them (PEP 503, then `_`)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def entry_points(group: str) -> list[EntryPoint]:
    """Every entry point of `group`, in importlib.metadata.entry_points(group=...)'s order."""
    return [point for folder, dist in _distributions() for point in _read(folder, dist, group)]


def _distributions() -> Iterator[tuple[str, str]]:
    """(metadata folder, distribution name) of each distribution on sys.path, first of a name."""
    seen: set[str] = set()
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except OSError:  # a zip, a missing folder: nothing a plain folder search finds
            continue
        # importlib.metadata groups a folder's infos by name, in the order it lists them.
        found: dict[str, list[str]] = {}
        for child in children:
            if child.lower().endswith(_INFO_SUFFIXES):
                found.setdefault(normalize(_dist_name(child)), []).append(child)
        for key, infos in found.items():
            if key not in seen:
                seen.add(key)
                yield os.path.join(root, infos[0]), _dist_name(infos[0])


def _dist_name(folder: str) -> str:
    """`Some.Name` of `Some.Name-1.0.dist-info`."""
    return folder.rpartition(".")[0].partition("-")[0]


def _read(folder: str, dist: str, group: str) -> Iterator[EntryPoint]:
    try:
        with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return
    # importlib.metadata's Sectioned parser, line for line, except that a line without "="
    # is skipped here where it raises there: one broken distribution must not hide the rest.
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
        elif section == group and "=" in line:
            name, _, value = line.partition("=")
            yield EntryPoint(name.strip(), value.strip(), dist)
