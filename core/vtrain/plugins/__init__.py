"""The plugin registry: framework plugins from the `vtrain.plugins` entry points, or registered.

Listing reads only package metadata; `get(name)` imports that one plugin module
(once: loaded plugins are cached), and the plugin imports its framework only
when configured. A third party adds a framework by shipping its own entry point
in this group, or, as fsspec allows beside its entry points, with `register`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from vtrain.errors import MissingExtraError, PluginError, UsageError, VtrainError
from vtrain.plugins.base import Handle, Plugin
from vtrain.plugins.entry_points import EntryPoint, normalize
from vtrain.plugins.entry_points import entry_points as read_entry_points
from vtrain.plugins.extras import real_extra

GROUP = "vtrain.plugins"
"""The entry-point group every plugin declares itself in, its key the plugin's name."""
DISABLE = "VTRAIN_DISABLE_PLUGINS"
"""The variable of comma-separated plugin names to ignore, as if not installed: mxnet,xgboost."""

_registered: dict[str, Plugin] = {}
_loaded: dict[str, Plugin] = {}
_lock = threading.Lock()


def _disabled(environ: Mapping[str, str]) -> frozenset[str]:
    return frozenset(n.strip() for n in environ.get(DISABLE, "").split(",") if n.strip())


def _entry_points(environ: Mapping[str, str]) -> dict[str, EntryPoint]:
    """Name -> the entry point that plugin comes from; the first of a name, vtrain's own first."""
    return _read_group(environ)[0]


def _clashes(environ: Mapping[str, str]) -> dict[str, list[EntryPoint]]:
    """Name -> the entry points of other distributions that declare it too, refused."""
    return _read_group(environ)[1]


def _read_group(
    environ: Mapping[str, str],
) -> tuple[dict[str, EntryPoint], dict[str, list[EntryPoint]]]:
    off = _disabled(environ)
    points = [ep for ep in read_entry_points(GROUP) if ep.name not in off]
    # A distribution may not take over a name another one has, as register() may not without
    # replace=True: a `pytorch` entry point in some package must not silently stand in for
    # vtrain's. vtrain's own come first; among the others, the first on sys.path.
    points.sort(key=lambda ep: normalize(ep.dist) != "vtrain")  # stable: sys.path order kept
    kept: dict[str, EntryPoint] = {}
    refused: dict[str, list[EntryPoint]] = {}
    for ep in points:
        if ep.name not in kept:
            kept[ep.name] = ep
        elif normalize(ep.dist) != normalize(kept[ep.name].dist):
            refused.setdefault(ep.name, []).append(ep)
    return kept, refused


def register(name: str, plugin: Plugin | type[Plugin], *, replace: bool = False) -> None:
    """Make `plugin` (a `Plugin` subclass, made here, or an instance) available as `name` in
    this process, beside the entry points.

    Raises `UsageError` for what is not a `Plugin`, and for a `name` that a registered
    plugin or an entry point already has, unless `replace` is True.
    """
    instance = plugin() if isinstance(plugin, type) else plugin
    if not isinstance(instance, Plugin):
        raise UsageError(
            "not a vtrain plugin",
            source="vtrain.plugins.register",
            value=plugin,
            expected="a subclass (or an instance) of vtrain.plugins.base.Plugin",
        )
    with _lock:
        if not replace and (name in _registered or name in _entry_points({})):
            raise UsageError(
                "a plugin of that name exists",
                source="vtrain.plugins.register",
                value=name,
                hint="pass replace=True to override it in this process",
            )
        _registered[name] = instance
        _loaded.pop(name, None)


def unregister(name: str) -> None:
    """Forget the plugin that `register` added as `name` (entry points are not affected)."""
    with _lock:
        _registered.pop(name, None)


def available(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Names of the installed and registered plugins that VTRAIN_DISABLE_PLUGINS in `environ`
    (default `os.environ`) leaves enabled, sorted; nothing is imported."""
    env = os.environ if environ is None else environ
    off = _disabled(env)
    return tuple(sorted({*_entry_points(env), *(n for n in _registered if n not in off)}))


def get(name: str, environ: Mapping[str, str] | None = None) -> Plugin:
    """The plugin registered under `name`, loaded now (its framework is not imported yet).

    `environ` (default `os.environ`) is read for VTRAIN_DISABLE_PLUGINS. Raises
    `PluginError` for a disabled plugin, an unknown name (with the known ones and the
    closest match) or a plugin that fails to load, and `MissingExtraError` for a plugin
    whose module cannot be imported.
    """
    env = os.environ if environ is None else environ
    if name in _disabled(env):
        raise PluginError(
            "plugin is disabled", source=DISABLE, value=name, hint=f"remove {name!r} from {DISABLE}"
        )
    with _lock:
        found = _registered.get(name) or _loaded.get(name)
    if found is not None:
        return found
    points = _entry_points(env)
    if name not in points:
        raise _unknown(name, sorted({*points, *_registered}))
    plugin = _load(name, points[name])
    with _lock:
        return _loaded.setdefault(name, plugin)


def _load(name: str, point: EntryPoint) -> Plugin:
    try:
        loaded = point.load()
        # Inside the try: an abstract class raises TypeError when it is made.
        plugin = loaded() if isinstance(loaded, type) else loaded
    except KeyboardInterrupt:
        raise
    except ImportError as e:
        # A built-in plugin's module imports nothing optional; a failure here means the
        # distribution that declares the entry point is incomplete.
        if real_extra(name) and normalize(point.dist) == "vtrain":
            raise MissingExtraError(f"the {name} plugin", name, module=e.name) from e
        raise MissingExtraError(
            f"the {name} plugin", None, module=e.name, install=f"reinstall {point.dist}"
        ) from e
    except BaseException as e:
        # A broken plugin must be named, not surface as some unrelated traceback; a plugin
        # that calls sys.exit() at import (SystemExit) must not end the command either.
        raise PluginError(
            f"plugin failed to load ({_why(e)})", source=f"entry point {point.value}", value=name
        ) from e
    if not isinstance(plugin, Plugin):
        raise PluginError(
            "entry point is not a vtrain plugin",
            source=f"entry point {point.value}",
            value=name,
            expected="a subclass of vtrain.plugins.base.Plugin",
        )
    return plugin


def _unknown(name: str, known: list[str]) -> PluginError:
    import difflib

    # No install hint here: every built-in plugin has its entry point whether or not its
    # framework is installed, so an unknown name is a typo or a third-party plugin.
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        hint = f"did you mean {close[0]!r}?"
    else:
        hint = "a third-party plugin registers an entry point in the vtrain.plugins group"
    return PluginError(
        "unknown plugin",
        source="vtrain.plugins.get",
        value=name,
        expected="one of: " + (", ".join(repr(n) for n in known) or "none installed"),
        hint=hint,
    )


def _why(error: BaseException) -> str:
    """`TypeError: Can't instantiate ...`, on one line."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def status(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Plugin name -> "ready", or why it is not: its framework is missing, or it fails to load.

    Every plugin `available` in `environ` (default `os.environ`) is listed. A broken
    third-party plugin is one line here, whatever it raises (SystemExit included):
    `vtrain info` lists it and goes on.
    """
    env = os.environ if environ is None else environ
    result = {}
    for name in available(env):
        try:
            plugin = get(name, env)
        except PluginError as e:
            failed = "plugin failed to load"
            result[name] = (
                e.problem.replace(failed, "fails to load", 1)
                if e.problem.startswith(failed)
                else f"fails to load ({e.problem})"
            )
            continue
        try:
            ready = plugin.is_available()
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # a third party's code: SystemExit included
            result[name] = f"fails to load (is_available() raised {_why(e)})"
            continue
        result[name] = "ready" if ready else "framework not installed"
    for name, refused in _clashes(env).items():
        if name in result:
            kept = _entry_points(env)[name].dist
            others = ", ".join(ep.dist for ep in refused)
            result[name] += f"; the {name!r} plugin of {others} is refused: {kept} has that name"
    return result


# Top-level modules the core's own extras install; each plugin declares its framework's
# (`Plugin.requires` and `Plugin.installs`), so a third-party plugin's hint works the same.
_CORE_EXTRA_OF_MODULE = {"optuna": "tune", "yaml": "tune"}


def extra_for_module(module: str) -> str | None:
    """The vtrain extra that installs `module` (``torch.nn`` -> pytorch), else None.

    Reads the installed plugins' declarations: called when a script has already
    failed on a missing module, so loading the plugin modules (not their
    frameworks) costs nothing anyone waits for.
    """
    top = module.partition(".")[0]
    if top in _CORE_EXTRA_OF_MODULE:
        return _CORE_EXTRA_OF_MODULE[top]
    for name in available():
        try:
            plugin = get(name)
        except VtrainError:
            continue
        if top in plugin.requires:
            return plugin.extra
        if top in plugin.installs:
            return plugin.installs[top]
    return None


__all__ = [
    "DISABLE",
    "GROUP",
    "Handle",
    "Plugin",
    "available",
    "extra_for_module",
    "get",
    "register",
    "status",
    "unregister",
]
