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


# Top-level modules the core's own extras install; each plugin declares its framework's
# (`Plugin.requires` and `Plugin.installs`), so a third-party plugin's hint works the same.
_CORE_EXTRA_OF_MODULE = {"optuna": "tune", "yaml": "tune"}


def extra_for_module(module: str) -> str | None:
    """The vtrain extra that installs `module` (``torch.nn`` -> pytorch), else None.

    Reads the installed plugins' declarations: called when a script has already
    failed on a missing module, so loading the plugin modules (not their
    frameworks) costs nothing anyone waits for.
    """
    from vtrain import plugins
    from vtrain.errors import VtrainError

    top = module.partition(".")[0]
    if top in _CORE_EXTRA_OF_MODULE:
        return _CORE_EXTRA_OF_MODULE[top]
    for name in plugins.available():
        try:
            plugin = plugins.get(name)
        except VtrainError:
            continue
        if top in plugin.requires:
            return plugin.extra
        if top in plugin.installs:
            return plugin.installs[top]
    return None
