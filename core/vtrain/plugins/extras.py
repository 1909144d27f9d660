"""The extras this installation of vtrain declares: an install hint names one only if it exists."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def vtrain_extras() -> frozenset[str]:
    """The `Provides-Extra` names in vtrain's own metadata (empty when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        return frozenset(metadata("vtrain").get_all("Provides-Extra") or ())
    except PackageNotFoundError:
        return frozenset()


def real_extra(name: str | None) -> str | None:
    """`name` when vtrain declares that extra, else None."""
    return name if name is not None and name in vtrain_extras() else None
