"""vtrain's entry-point reader answers as importlib.metadata does, here and on made-up sys.paths."""

from __future__ import annotations

import importlib.metadata
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.plugins.entry_points import entry_points, normalize


def _theirs(group: str) -> list[tuple[str, str, str]]:
    return [
        (ep.name, ep.value, normalize(ep.dist.name if ep.dist else ""))
        for ep in importlib.metadata.entry_points(group=group)
    ]


def _ours(group: str) -> list[tuple[str, str, str]]:
    return [(ep.name, ep.value, normalize(ep.dist)) for ep in entry_points(group)]


def test_every_group_installed_here_reads_as_importlib_metadata_reads_it() -> None:
    groups = {ep.group for d in importlib.metadata.distributions() for ep in d.entry_points}
    assert {"vtrain.plugins", "console_scripts"} <= groups
    for group in sorted(groups):
        assert _ours(group) == _theirs(group), group


def _dist(site: Path, folder: str, text: str) -> None:
    (site / folder).mkdir(parents=True)
    (site / folder / "METADATA").write_text(f"Name: {folder.partition('-')[0]}\n")
    (site / folder / "entry_points.txt").write_text(textwrap.dedent(text))


def test_the_first_distribution_of_a_name_hides_later_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    # Spelled differently, one name once normalized; comments, blank lines, spaces and extras.
    _dist(
        first,
        "Some.Plugin-2.0.dist-info",
        """
        # a comment
        [vtrain.plugins]
        alpha = pkg.mod:Plugin
          beta=pkg.other : Thing.attr [extra1, extra2]

        [console_scripts]
        alpha = pkg.cli:main
    """,
    )
    _dist(second, "some_plugin-1.0.dist-info", "[vtrain.plugins]\nalpha = old.mod:Plugin\n")
    _dist(second, "another-1.0.egg-info", "[vtrain.plugins]\ngamma = g:G\n")
    (second / "broken-1.0.dist-info").mkdir()  # no entry_points.txt
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second)])
    for group in ("vtrain.plugins", "console_scripts", "nothing"):
        assert _ours(group) == _theirs(group), group
    assert [(ep.name, ep.value, ep.dist) for ep in entry_points("vtrain.plugins")] == [
        ("alpha", "pkg.mod:Plugin", "Some.Plugin"),
        ("beta", "pkg.other : Thing.attr [extra1, extra2]", "Some.Plugin"),
        ("gamma", "g:G", "another"),
    ]


def test_load_follows_the_object_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ep_target_pkg").mkdir()
    (tmp_path / "ep_target_pkg" / "__init__.py").write_text("class Outer:\n    class Inner: ...\n")
    _dist(
        tmp_path,
        "t-1.dist-info",
        """
        [g]
        nested = ep_target_pkg : Outer.Inner [x]
        mod = ep_target_pkg
    """,
    )
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    points = {ep.name: ep for ep in entry_points("g")}
    assert points["nested"].load().__qualname__ == "Outer.Inner"
    assert points["mod"].load().__name__ == "ep_target_pkg"


# Lines importlib.metadata parses without raising: headers, comments, blanks, `name = value`,
# with no character str.splitlines() would break them at.
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_TEXT = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters=_BREAKS))
_LINE = st.one_of(
    st.builds(
        lambda a, b, c: f"{a}[{b}]{c}",
        st.sampled_from(["", " ", "\t"]),
        st.sampled_from(["g", " g ", "[g]", "other", "g2", ""]),
        st.sampled_from(["", " "]),
    ),
    st.builds(lambda t: "#" + t, _TEXT),
    st.sampled_from(["", "   "]),
    st.builds(lambda a, b: f"{a}={b}", _TEXT, _TEXT),
)


@examples(200)
@given(lines=st.lists(_LINE, max_size=12), newline=st.sampled_from(["\n", "\r\n", "\r"]))
def test_any_entry_points_file_reads_as_importlib_metadata_reads_it(
    lines: list[str], newline: str
) -> None:
    with tempfile.TemporaryDirectory() as site:
        folder = Path(site) / "fuzzed-1.0.dist-info"
        folder.mkdir()
        (folder / "METADATA").write_text("Name: fuzzed\n")
        (folder / "entry_points.txt").write_bytes(newline.join(lines).encode())
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "path", [site])
            for group in ("g", "other", "[g]"):
                assert _ours(group) == _theirs(group), group


def test_a_line_without_equals_is_skipped_where_importlib_metadata_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _dist(tmp_path, "odd-1.dist-info", "[g]\nfirst = a:b\njust a name\nsecond = c:d\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    with pytest.raises(TypeError):
        _theirs("g")
    read = [(ep.name, ep.value) for ep in entry_points("g")]
    assert read == [("first", "a:b"), ("second", "c:d")]
