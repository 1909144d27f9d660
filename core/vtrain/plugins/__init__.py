"""The plugin registry: framework plugins found through the `vtrain.plugins` entry points.

Listing reads only package metadata; `get(name)` imports that one plugin module,
and the plugin imports its framework only when configured. A third party adds
a framework by shipping its own entry point in this group.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from vtrain.errors import MissingExtraError, PluginError
from vtrain.plugins.base import Plugin

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

GROUP = "vtrain.plugins"
DISABLE = "VTRAIN_DISABLE_PLUGINS"


def _disabled(environ: Mapping[str, str]) -> frozenset[str]:
    return frozenset(n.strip() for n in environ.get(DISABLE, "").split(",") if n.strip())


def _entry_points(environ: Mapping[str, str]) -> dict[str, EntryPoint]:
    # importlib.metadata costs ~30 ms to import: more than the rest of vtrain. Only here.
    from importlib.metadata import entry_points

    off = _disabled(environ)
    return {ep.name: ep for ep in entry_points(group=GROUP) if ep.name not in off}


def available(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Names of the installed, enabled plugins, sorted; no plugin or framework is imported."""
    return tuple(sorted(_entry_points(os.environ if environ is None else environ)))


def get(name: str, environ: Mapping[str, str] | None = None) -> Plugin:
    """The plugin registered under `name`, loaded now (its framework is not imported yet)."""
    env = os.environ if environ is None else environ
    found = _entry_points(env)
    if name not in found:
        if name in _disabled(env):
            raise PluginError(
                "plugin is disabled",
                source=DISABLE,
                value=name,
                hint=f"remove {name!r} from {DISABLE}",
            )
        known = ", ".join(repr(n) for n in sorted(found)) or "none installed"
        raise PluginError(
            "unknown plugin",
            source="vtrain.plugins.get",
            value=name,
            expected=f"one of: {known}",
            hint=f'a built-in framework installs with pip install "vtrain[{name}]"',
        )
    try:
        loaded = found[name].load()
    except ImportError as e:
        raise MissingExtraError(f"the {name} plugin", name, module=e.name) from e
    except Exception as e:
        # A broken plugin must be named, not surface as some unrelated traceback.
        raise PluginError(
            f"plugin failed to load ({type(e).__name__}: {e})",
            source=f"entry point {found[name].value}",
            value=name,
        ) from e
    plugin = loaded() if isinstance(loaded, type) else loaded
    if not isinstance(plugin, Plugin):
        raise PluginError(
            "entry point is not a vtrain plugin",
            source=f"entry point {found[name].value}",
            value=name,
            expected="a subclass of vtrain.plugins.base.Plugin",
        )
    return plugin


def status(environ: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Plugin name -> whether its framework is installed, without importing any framework."""
    env = os.environ if environ is None else environ
    result = {}
    for name in available(env):
        try:
            result[name] = get(name, env).is_available()
        except PluginError:
            result[name] = False
    return result


__all__ = ["DISABLE", "GROUP", "Plugin", "available", "get", "status"]
