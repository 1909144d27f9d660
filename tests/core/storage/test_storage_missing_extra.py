"""gs:// without the `gcs` extra: every operation names the extra, not "No module named google"."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vtrain.errors import MissingExtraError
from vtrain.storage import open_location

# Every Location operation that reaches Cloud Storage (makedirs only checks the name).
CALLS: list[tuple[str, Callable[[Any, Path], object]]] = [
    ("join", lambda loc, tmp: loc.join("a")),
    ("open_read", lambda loc, tmp: loc.open_read("a")),
    ("open_write", lambda loc, tmp: loc.open_write("a")),
    ("read_bytes", lambda loc, tmp: loc.read_bytes("a")),
    ("write_bytes", lambda loc, tmp: loc.write_bytes("a", b"x")),
    ("download_fileobj", lambda loc, tmp: loc.download_fileobj("a", io.BytesIO())),
    ("exists", lambda loc, tmp: loc.exists("a")),
    ("list", lambda loc, tmp: loc.list()),
    ("remove", lambda loc, tmp: loc.remove("a")),
    ("upload", lambda loc, tmp: loc.upload(str(tmp), "a")),
    ("download", lambda loc, tmp: loc.download("a", str(tmp / "out"))),
]


@pytest.mark.parametrize("call", [c for _, c in CALLS], ids=[n for n, _ in CALLS])
def test_every_operation_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, call: Callable[[Any, Path], object]
) -> None:
    # A None entry in sys.modules makes an import fail as if the package were not installed;
    # the whole google namespace goes, as in an environment without the extra.
    for name in [m for m in sys.modules if m == "google" or m.startswith("google.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in ("google", "google.api_core", "google.cloud", "google.cloud.storage"):
        monkeypatch.setitem(sys.modules, name, None)
    location = open_location("gs://bucket/prefix", gcs_mount=str(tmp_path / "no-mount"))
    with pytest.raises(
        MissingExtraError, match=r'pip install .*"google-cloud-storage>=2.10" \(as vtrain\[gcs\]'
    ):
        call(location, tmp_path)
