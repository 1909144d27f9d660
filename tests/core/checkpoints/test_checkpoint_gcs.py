"""Checkpoints on gs:// against the emulator: CRC32C end to end, parallel and ranged transfers."""

from __future__ import annotations

import os

import google_crc32c
import pytest
from faulty_proxy import FaultyProxy

from vtrain.checkpoints import CheckpointManager, Manifest, transfer
from vtrain.errors import CheckpointError, StorageError
from vtrain.storage import open_location

FILES = {f"shard-{i:02d}.bin": os.urandom(300_000 + i) for i in range(12)}


def gcs(emulator, tmp_path, host: str | None = None) -> tuple[str, dict]:
    bucket = emulator.new_bucket()
    env = {"STORAGE_EMULATOR_HOST": host or emulator.host}
    return f"gs://{bucket}/ckpt", {"environ": env, "gcs_mount": str(tmp_path / "none")}


def marker(uri: str, options: dict, step: int = 1) -> Manifest:
    data = open_location(uri, **options).read_bytes(f"step-{step:012d}/COMMIT.json")
    return Manifest.from_marker(data, uri)


def test_the_manifest_records_the_crc32c_the_server_keeps(gcs_emulator, tmp_path) -> None:
    uri, options = gcs(gcs_emulator, tmp_path)
    m = CheckpointManager(uri, is_leader=True, **options)
    m.save(1, FILES)
    manifest = marker(uri, options)
    assert manifest.checksum == "crc32c"
    data = open_location(uri, **options).join("step-000000000001", manifest.folder)
    stored = data.stored_checksums()
    for entry in manifest.files:
        assert entry.checksum == google_crc32c.value(FILES[entry.name])
        assert stored[entry.name] == (entry.size, entry.checksum)
    with m.restore() as ckpt:  # type: ignore[union-attr]
        assert {k: bytes(v) for k, v in ckpt.files.items()} == FILES


def test_the_server_refuses_an_upload_whose_crc32c_differs(gcs_emulator, tmp_path) -> None:
    uri, options = gcs(gcs_emulator, tmp_path)
    loc = open_location(uri, **options)
    with pytest.raises(StorageError, match=r"cannot write"):
        loc.write_checked("x", b"payload", google_crc32c.value(b"payloae"))
    assert not loc.exists("x")


def test_a_changed_object_is_caught_before_any_download(gcs_emulator, tmp_path) -> None:
    uri, options = gcs(gcs_emulator, tmp_path)
    CheckpointManager(uri, is_leader=True, **options).save(1, FILES)
    manifest = marker(uri, options)
    data = open_location(uri, **options).join("step-000000000001", manifest.folder)
    name = sorted(FILES)[5]
    changed = bytearray(FILES[name])
    changed[1000] ^= 0x40
    data.write_bytes(name, changed)  # same size, other bytes: only a checksum tells
    with FaultyProxy(gcs_emulator.host, damage=0) as proxy:
        env = {"STORAGE_EMULATOR_HOST": proxy.url}
        reader = CheckpointManager(uri, is_leader=True, environ=env, gcs_mount=str(tmp_path / "x"))
        with pytest.raises(CheckpointError, match=rf"'{name}'.*the CRC32C the store keeps"):
            reader.restore(1)
        assert proxy.media_gets == 0


@pytest.mark.parametrize("kind", ["files", "directory"])
def test_a_download_damaged_once_is_fetched_again(gcs_emulator, tmp_path, kind) -> None:
    uri, options = gcs(gcs_emulator, tmp_path)
    payload = FILES if kind == "files" else _writer(FILES)
    CheckpointManager(uri, is_leader=True, **options).save(1, payload)
    with FaultyProxy(gcs_emulator.host, damage=1) as proxy:
        env = {"STORAGE_EMULATOR_HOST": proxy.url}
        reader = CheckpointManager(uri, is_leader=True, environ=env, gcs_mount=str(tmp_path / "x"))
        with reader.restore(1) as ckpt:  # type: ignore[union-attr]
            assert _contents(ckpt) == FILES
        assert proxy.damage_left == 0 and proxy.media_gets == len(FILES) + 1


def test_a_download_damaged_every_time_is_refused(gcs_emulator, tmp_path) -> None:
    uri, options = gcs(gcs_emulator, tmp_path)
    CheckpointManager(uri, is_leader=True, **options).save(1, FILES)
    with FaultyProxy(gcs_emulator.host, damage=10**6) as proxy:
        env = {"STORAGE_EMULATOR_HOST": proxy.url}
        reader = CheckpointManager(uri, is_leader=True, environ=env, gcs_mount=str(tmp_path / "x"))
        with pytest.raises(CheckpointError, match=r"bytes received, 2 downloads"):
            reader.restore(1)


@pytest.mark.parametrize("kind", ["bytes", "directory"])
def test_a_large_file_comes_down_in_ranges(gcs_emulator, tmp_path, monkeypatch, kind) -> None:
    monkeypatch.setattr(transfer, "RANGE", 256 << 10)  # 1.3 MiB: six ranges, the last one short
    big = os.urandom((1 << 20) + 300_001)
    uri, options = gcs(gcs_emulator, tmp_path)
    CheckpointManager(uri, is_leader=True, **options).save(
        1, big if kind == "bytes" else _writer({"big": big})
    )
    with FaultyProxy(gcs_emulator.host, damage=0) as proxy:
        env = {"STORAGE_EMULATOR_HOST": proxy.url}
        reader = CheckpointManager(uri, is_leader=True, environ=env, gcs_mount=str(tmp_path / "x"))
        with reader.restore(1) as ckpt:  # type: ignore[union-attr]
            assert (ckpt.data if kind == "bytes" else _contents(ckpt)["big"]) == big
        assert proxy.media_gets == 6


def _writer(files: dict[str, bytes]):
    def write(folder: str) -> None:
        for name, data in files.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)

    return write


def _contents(ckpt) -> dict[str, bytes]:
    if ckpt.manifest.kind == "directory":
        return {
            e.name: open(os.path.join(ckpt.directory, e.name), "rb").read()
            for e in ckpt.manifest.files
        }
    return {k: bytes(v) for k, v in ckpt.files.items()}
