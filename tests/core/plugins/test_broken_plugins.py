"""Third-party plugins that are broken, or that take a built-in's name, through real dist-infos.

A broken plugin (abstract, `is_available()` raising, `sys.exit(3)` at import)
is listed by `vtrain info` as "fails to load (why)" and never ends the
command; an entry point named like a built-in (`pytorch`) in another
distribution is refused, as `register()` refuses it without `replace=True`,
wherever it sits on sys.path, and `vtrain info` names both distributions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vtrain import plugins
from vtrain.cli import main
from vtrain.errors import PluginError, UsageError

BROKEN = """
from vtrain.plugins.base import Plugin

class Abstract(Plugin):
    name = "abstract"
    extra = "abstract"  # configure() is left abstract

class Raises(Plugin):
    name = "raises"
    extra = "raises"

    def configure(self, info=None, **options):
        return None

    def is_available(self):
        raise OSError(5, "Input/output error", "/dev/gpu0")
"""
EVIL = """
from vtrain.plugins.base import Plugin

class Impostor(Plugin):
    name = "pytorch"
    extra = "pytorch"

    def configure(self, info=None, **options):
        return "impostor"
"""


def _dist(site: Path, name: str, entry_points: str, modules: dict[str, str]) -> None:
    # The folder spells the name as wheels do: evil-torch is evil_torch-1.0.dist-info.
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    for module, text in modules.items():
        (site / f"{module}.py").write_text(text)


@pytest.fixture
def sites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """A site with three broken plugins first on sys.path; one with a `pytorch` impostor last."""
    broken, late = tmp_path / "broken", tmp_path / "late"
    _dist(
        broken,
        "broken-plugins",
        """
        [vtrain.plugins]
        abstract = broken_plugins:Abstract
        raises = broken_plugins:Raises
        exits = exiting_plugin:Plugin
    """,
        {"broken_plugins": BROKEN, "exiting_plugin": "import sys\nsys.exit(3)\n"},
    )
    _dist(
        late,
        "evil-torch",
        "[vtrain.plugins]\npytorch = evil_plugin:Impostor\n",
        {"evil_plugin": EVIL},
    )
    monkeypatch.setattr(sys, "path", [str(broken), *sys.path, str(late)])
    for module in ("broken_plugins", "exiting_plugin", "evil_plugin"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setattr(plugins, "_loaded", {})
    return [broken, late]


def test_broken_plugins_are_listed_with_why(sites: list[Path]) -> None:
    status = plugins.status({})
    assert status["abstract"].startswith(
        "fails to load (TypeError: Can't instantiate abstract class Abstract"
    )
    assert status["raises"] == (
        "fails to load (is_available() raised OSError: [Errno 5] Input/output error: '/dev/gpu0')"
    )
    assert status["exits"] == "fails to load (SystemExit: 3)"


def test_a_plugin_that_exits_at_import_is_a_plugin_error_not_an_exit(sites: list[Path]) -> None:
    with pytest.raises(
        PluginError,
        match=r"entry point exiting_plugin:Plugin: plugin failed to load \(SystemExit: 3\)",
    ):
        plugins.get("exits", {})


def test_vtrain_info_lists_broken_plugins_and_succeeds(
    sites: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "  exits            fails to load (SystemExit: 3)" in out
    assert "  raises           fails to load (is_available() raised OSError" in out
    assert main(["info", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("}\n") and out.count("\n") == 1
    assert json.loads(out)["plugins"]["exits"] == "fails to load (SystemExit: 3)"


def test_vtrain_info_survives_them_as_a_real_command(sites: list[Path]) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(sites[0]), *sys.path[1:]])}
    done = subprocess.run(
        [sys.executable, "-m", "vtrain", "info"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "fails to load (SystemExit: 3)" in done.stdout
    assert "fails to load (TypeError: Can't instantiate abstract class" in done.stdout


@pytest.mark.parametrize("first", [False, True], ids=["impostor later", "impostor first"])
def test_an_entry_point_with_a_built_in_name_is_refused_naming_both(
    sites: list[Path], monkeypatch: pytest.MonkeyPatch, first: bool
) -> None:
    if first:
        monkeypatch.setattr(sys, "path", [str(sites[1]), *sys.path])
    plugin = plugins.get("pytorch", {})
    assert type(plugin).__module__.startswith("vtrain_pytorch")
    assert "evil_plugin" not in sys.modules
    said = plugins.status({})["pytorch"]
    assert said.endswith("; the 'pytorch' plugin of evil_torch is refused: vtrain has that name")
    with pytest.raises(UsageError, match=r"a plugin of that name exists \(got 'pytorch'\)"):
        plugins.register("pytorch", plugin)
