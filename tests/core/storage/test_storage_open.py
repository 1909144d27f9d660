"""`open_location`: which implementation a path or URI gets, and the errors for bad ones."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vtrain.errors import MissingExtraError, StorageError
from vtrain.storage import (
    FuseLocation,
    GcsLocation,
    LocalLocation,
    gcs_mount_root,
    open_location,
    split_gs_uri,
)


@pytest.fixture
def mount(tmp_path: Path) -> Path:
    (tmp_path / "gcs" / "bucket").mkdir(parents=True)
    return tmp_path / "gcs"


def test_a_local_path_is_local(tmp_path: Path) -> None:
    loc = open_location(tmp_path / "x", environ={})
    assert type(loc) is LocalLocation and loc.path == str(tmp_path / "x")
    assert type(open_location(f"file://{tmp_path}", environ={})) is LocalLocation


def test_relative_paths_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert open_location("rel/dir", environ={}).uri == str(tmp_path / "rel" / "dir")


def test_a_gcs_path_has_fuse_semantics() -> None:
    loc = open_location("/gcs/bucket/run/ckpt", environ={})
    assert type(loc) is FuseLocation and not loc.atomic_rename


def test_gs_maps_to_the_mount_when_the_bucket_is_there(mount: Path) -> None:
    loc = open_location("gs://bucket/a/b/", gcs_mount=str(mount), environ={})
    assert type(loc) is FuseLocation and loc.path == str(mount / "bucket" / "a" / "b")


def test_the_mount_root_comes_from_the_environment(mount: Path) -> None:
    env = {"VTRAIN_GCS_MOUNT": str(mount)}
    assert gcs_mount_root(environ=env) == str(mount)
    assert gcs_mount_root(environ={}) == "/gcs"
    assert type(open_location("gs://bucket/x", environ=env)) is FuseLocation
    # A path under the configured root is FUSE too.
    assert type(open_location(mount / "bucket" / "y", environ=env)) is FuseLocation


def test_gs_without_the_mount_uses_the_client(tmp_path: Path) -> None:
    loc = open_location("gs://other-bucket/p/q", gcs_mount=str(tmp_path), environ={})
    assert type(loc) is GcsLocation and loc.uri == "gs://other-bucket/p/q"


def test_fuse_false_insists_on_the_client_or_posix(mount: Path, tmp_path: Path) -> None:
    assert type(open_location("gs://bucket/x", gcs_mount=str(mount), fuse=False)) is GcsLocation
    assert type(open_location("/gcs/bucket/x", fuse=False, environ={})) is LocalLocation


def test_fuse_true_treats_a_local_folder_as_fuse(tmp_path: Path) -> None:
    loc = open_location(tmp_path, fuse=True, environ={})
    assert type(loc) is FuseLocation and not loc.atomic_rename


@pytest.mark.parametrize(
    ("uri", "match"),
    [
        ("s3://bucket/x", "unsupported storage scheme.*'s3'"),
        ("gs://Bad_Bucket/x", "not a Cloud Storage bucket name.*'Bad_Bucket'"),
        ("gs://b/x", "not a Cloud Storage bucket name"),
        ("gs://bucket/a/../b", "could escape"),
        ("", "empty location"),
    ],
)
def test_bad_locations_say_what_is_wrong(uri: str, match: str) -> None:
    with pytest.raises(StorageError, match=match):
        open_location(uri, environ={})


def test_split_gs_uri() -> None:
    assert split_gs_uri("gs://my-bucket/a/b/") == ("my-bucket", "a/b")
    assert split_gs_uri("gs://my.bucket.example") == ("my.bucket.example", "")


def test_local_locations_do_not_import_the_client(tmp_path: Path) -> None:
    code = f"""
        import sys
        from vtrain.storage import open_location
        open_location({str(tmp_path)!r}).write_bytes("f", b"x")
        open_location("gs://bucket/x", gcs_mount="/nonexistent")  # made, not used
        assert "google.cloud.storage" not in sys.modules, "imported too early"
    """
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True)


def test_a_missing_client_names_the_extra() -> None:
    # A None entry in sys.modules makes the import fail as if the package were not installed.
    code = """
        import sys
        sys.modules["google.cloud.storage"] = None
        from vtrain.errors import MissingExtraError
        from vtrain.storage import open_location
        try:
            open_location("gs://bucket/x", gcs_mount="/nonexistent").list()
        except MissingExtraError as e:
            print(e)
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], check=True, capture_output=True, text=True
    ).stdout
    assert "google.cloud.storage" in out and '"google-cloud-storage>=2.10" (as vtrain[gcs]' in out
    assert issubclass(MissingExtraError, ImportError)


def test_emulator_host_from_the_environment(gcs_emulator) -> None:
    bucket = gcs_emulator.new_bucket()
    env = dict(os.environ, STORAGE_EMULATOR_HOST=gcs_emulator.host)
    loc = open_location(f"gs://{bucket}/x", environ=env, gcs_mount="/nonexistent")
    loc.write_bytes("hello", b"world")
    assert gcs_emulator.client().bucket(bucket).blob("x/hello").download_as_bytes() == b"world"


def test_subfolders_share_one_client(gcs_emulator) -> None:
    loc = open_location("gs://bucket/x", environ=gcs_emulator.environ, gcs_mount="/nonexistent")
    assert isinstance(loc, GcsLocation)
    child = loc.join("a", "b")
    assert isinstance(child, GcsLocation) and child.client is loc.client
    assert child.uri == "gs://bucket/x/a/b"
