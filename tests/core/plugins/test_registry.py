"""The registry, exercised through real entry points of a throwaway distribution on sys.path."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from vtrain import ClusterInfo, MissingExtraError, PluginError, UsageError, plugins
from vtrain.plugins.base import Plugin

PLUGIN_MODULE = """
from vtrain.plugins.base import Plugin

class Throwaway(Plugin):
    name = "throwaway"
    extra = "throwaway"
    requires = ("json",)

    def configure(self, info=None, **options):
        import vtrain
        info = info or vtrain.ClusterInfo.from_env({})
        return {"rank": info.rank, **options}

class NeedsMissing(Plugin):
    name = "needsmissing"
    extra = "needsmissing"  # not an extra of vtrain: no hint may name it
    install = "pip install throwaway[framework]"
    requires = ("no_such_framework_xyz",)

    def configure(self, info=None, **options):
        return self.require("no_such_framework_xyz")

class NotAPlugin:
    pass
"""

ENTRY_POINTS = """
[vtrain.plugins]
throwaway = throwaway_plugin:Throwaway
needsmissing = throwaway_plugin:NeedsMissing
notaplugin = throwaway_plugin:NotAPlugin
missingmodule = no_such_plugin_module:Plugin
crashes = crashing_plugin:Plugin
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding an installed distribution with vtrain.plugins entry points."""
    (tmp_path / "throwaway_plugin.py").write_text(PLUGIN_MODULE)
    (tmp_path / "crashing_plugin.py").write_text("raise RuntimeError('boom at import')\n")
    info = tmp_path / "throwaway-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: throwaway\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(ENTRY_POINTS))
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in ("throwaway_plugin", "crashing_plugin"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    return tmp_path


def test_available_lists_names_without_importing_anything(site: Path) -> None:
    names = plugins.available({})
    assert {"throwaway", "needsmissing", "crashes"} <= set(names)
    assert names == tuple(sorted(names))
    assert "throwaway_plugin" not in sys.modules and "crashing_plugin" not in sys.modules


def test_get_loads_only_the_plugin_asked_for(site: Path) -> None:
    plugin = plugins.get("throwaway", {})
    assert "throwaway_plugin" in sys.modules and "crashing_plugin" not in sys.modules
    assert plugin.name == "throwaway" and plugin.is_available()
    info = ClusterInfo.from_env(
        {
            "TORCHELASTIC_RUN_ID": "r",
            "RANK": "2",
            "WORLD_SIZE": "3",
            "MASTER_ADDR": "h",
            "MASTER_PORT": "1",
        }
    )
    assert plugin.configure(info, lr=0.1) == {"rank": 2, "lr": 0.1}
    assert plugin.configure() == {"rank": 0}


def test_unknown_name_lists_the_known_ones(site: Path) -> None:
    with pytest.raises(
        PluginError, match=r"unknown plugin \(got 'torchh'\); expected one of: .*'throwaway'"
    ) as caught:
        plugins.get("torchh", {})
    # A typo is not an extra: no `pip install "vtrain[torchh]"`, a suggestion instead.
    assert "vtrain[" not in str(caught.value)
    assert "did you mean 'pytorch'?" in str(caught.value)


def test_a_built_in_framework_that_is_missing_names_its_real_extra() -> None:
    plugin = plugins.get("pytorch", {})
    if plugin.is_available():
        pytest.skip("torch is installed in this session; the core session runs without it")
    with pytest.raises(
        MissingExtraError, match=r'Hint: pip install .*"torch>=2.2" \(as vtrain\[pytorch\]'
    ):
        plugin.require("torch")


def test_a_third_party_extra_is_never_passed_off_as_vtrains(site: Path) -> None:
    plugin = plugins.get("needsmissing", {})
    assert not plugin.is_available()
    with pytest.raises(
        MissingExtraError, match=r"Hint: pip install throwaway\[framework\]$"
    ) as caught:
        plugin.configure()
    assert isinstance(caught.value, ImportError) and caught.value.name == "no_such_framework_xyz"
    assert "vtrain[" not in str(caught.value)


def test_a_plugin_module_that_cannot_import_names_its_distribution(site: Path) -> None:
    with pytest.raises(
        MissingExtraError, match=r"'no_such_plugin_module', needed for .*reinstall throwaway"
    ):
        plugins.get("missingmodule", {})


def test_a_crashing_plugin_is_named(site: Path) -> None:
    with pytest.raises(
        PluginError,
        match=r"entry point crashing_plugin:Plugin: plugin failed to load "
        r"\(RuntimeError: boom at import\) \(got 'crashes'\)",
    ):
        plugins.get("crashes", {})


def test_an_entry_point_that_is_not_a_plugin_is_refused(site: Path) -> None:
    with pytest.raises(PluginError, match="entry point is not a vtrain plugin"):
        plugins.get("notaplugin", {})


def test_plugins_can_be_switched_off(site: Path) -> None:
    env = {"VTRAIN_DISABLE_PLUGINS": "crashes, throwaway"}
    assert "throwaway" not in plugins.available(env) and "needsmissing" in plugins.available(env)
    with pytest.raises(
        PluginError, match=r"VTRAIN_DISABLE_PLUGINS: plugin is disabled \(got 'throwaway'\)"
    ):
        plugins.get("throwaway", env)


def test_status_reports_availability_and_survives_broken_plugins(site: Path) -> None:
    status = plugins.status({})
    assert status["throwaway"] == "ready"
    assert status["needsmissing"] == "framework not installed"
    assert status["crashes"] == "fails to load (RuntimeError: boom at import)"


def test_loaded_plugins_are_cached(site: Path) -> None:
    assert plugins.get("throwaway", {}) is plugins.get("throwaway", {})


def test_a_plugin_registered_at_runtime_is_listed_and_got() -> None:
    class Runtime(Plugin):
        name = "runtime"

        def configure(self, info=None, *, environ=None):  # type: ignore[no-untyped-def,override]
            return None

    plugins.register("runtime", Runtime)
    try:
        assert "runtime" in plugins.available({})
        assert isinstance(plugins.get("runtime", {}), Runtime)
        assert "runtime" not in plugins.available({"VTRAIN_DISABLE_PLUGINS": "runtime"})
        with pytest.raises(PluginError, match="plugin is disabled"):
            plugins.get("runtime", {"VTRAIN_DISABLE_PLUGINS": "runtime"})
        with pytest.raises(UsageError, match=r"a plugin of that name exists \(got 'runtime'\)"):
            plugins.register("runtime", Runtime)
        with pytest.raises(UsageError, match=r"a plugin of that name exists \(got 'pytorch'\)"):
            plugins.register("pytorch", Runtime)
        with pytest.raises(UsageError, match="not a vtrain plugin"):
            plugins.register("other", object)  # type: ignore[arg-type]
    finally:
        plugins.unregister("runtime")
    assert "runtime" not in plugins.available({})
