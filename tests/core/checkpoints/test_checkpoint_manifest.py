"""The manifest catches tampered, truncated and missing files, and forged or torn markers."""

from __future__ import annotations

import json
import os
import zlib

import pytest
from logged import warned

from vtrain.checkpoints import CheckpointManager, Manifest
from vtrain.errors import CheckpointError
from vtrain.storage import Location, open_location

STEP = "step-000000000002"


@pytest.fixture
def saved(medium) -> tuple[CheckpointManager, Location, str]:
    """Steps 1 and 2 committed; returns the manager, the root and step 2's data file name."""
    m = CheckpointManager(medium.uri, is_leader=True, **medium.options)
    m.save(1, {"w": b"one" * 1000})
    m.save(2, {"w": b"two" * 1000, "x": b"extra"})
    loc = open_location(medium.uri, **medium.options)
    folder = Manifest.from_marker(loc.read_bytes(f"{STEP}/COMMIT.json"), "test").folder
    return m, loc, f"{STEP}/{folder}/w"


def test_a_changed_byte_is_caught(saved) -> None:
    m, loc, name = saved
    data = bytearray(loc.read_bytes(name))
    data[100] ^= 1
    loc.write_bytes(name, data)
    with pytest.raises(CheckpointError, match=r"step 2: file 'w' does not match.*(CRC-32|CRC32C)"):
        m.restore(2)


def test_a_truncated_file_is_caught(saved) -> None:
    m, loc, name = saved
    loc.write_bytes(name, loc.read_bytes(name)[:-1])
    with pytest.raises(CheckpointError, match=r"'w'.*\(size\).*2999 bytes.*expected 3000 bytes"):
        m.restore(2)


def test_a_longer_file_is_caught(saved) -> None:
    m, loc, name = saved
    loc.write_bytes(name, loc.read_bytes(name) + b"!")
    with pytest.raises(CheckpointError, match=r"'w'.*size.*3001 bytes"):
        m.restore(2)


def test_a_missing_file_is_caught(saved) -> None:
    m, loc, name = saved
    loc.remove(name)
    with pytest.raises(CheckpointError, match=r"step 2: cannot read a file the manifest names"):
        m.restore(2)


def test_latest_falls_back_to_an_intact_step_with_a_warning(saved, caplog) -> None:
    m, loc, name = saved
    loc.write_bytes(name, b"garbage")
    with warned(caplog, r"^vtrain: .*step 2.*'w'.*trying an older step"):
        ckpt = m.restore()
    assert ckpt is not None and ckpt.step == 1 and ckpt.files["w"] == b"one" * 1000


def test_no_intact_step_is_an_error(saved, caplog) -> None:
    m, loc, name = saved
    loc.write_bytes(name, b"garbage")
    m.save(1, {"w": b""})  # re-save step 1, then damage its marker's file too
    folder = Manifest.from_marker(loc.read_bytes("step-000000000001/COMMIT.json"), "t").folder
    loc.write_bytes(f"step-000000000001/{folder}/w", b"?")
    with (
        warned(caplog),
        pytest.raises(CheckpointError, match=r"no committed step passes.*'2, 1'"),
    ):
        m.restore()


def test_a_torn_marker_means_not_committed(saved) -> None:
    m, loc, _ = saved
    marker = loc.read_bytes(f"{STEP}/COMMIT.json")
    loc.write_bytes(f"{STEP}/COMMIT.json", marker[: len(marker) // 2])
    assert m.steps() == [1] and m.latest_step() == 1
    with pytest.raises(CheckpointError, match=r"step 2: commit marker is not JSON"):
        m.restore(2)


def test_an_edited_marker_means_not_committed(saved) -> None:
    m, loc, _ = saved
    marker = json.loads(loc.read_bytes(f"{STEP}/COMMIT.json"))
    marker["manifest"]["files"][0]["size"] = 2
    loc.write_bytes(f"{STEP}/COMMIT.json", json.dumps(marker).encode())
    assert m.latest_step() == 1
    with pytest.raises(CheckpointError, match=r"bad 'manifest_crc32'"):
        m.restore(2)


def _forge(loc: Location, edit) -> None:
    """Rewrite step 2's manifest and recompute its CRC, as a forger would."""
    marker = json.loads(loc.read_bytes(f"{STEP}/COMMIT.json"))
    edit(marker["manifest"])
    body = json.dumps(marker["manifest"], sort_keys=True, separators=(",", ":")).encode()
    marker["manifest_crc32"] = f"{zlib.crc32(body):08x}"
    loc.write_bytes(f"{STEP}/COMMIT.json", json.dumps(marker).encode())


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d["files"][0].update(name="../../../etc/passwd"), "could escape"),
        (lambda d: d["files"][0].update(name="/abs"), "could escape"),
        (lambda d: d.update(folder="../step-000000000001"), "bad data folder"),
        (lambda d: d.update(step=1), "belongs to another step"),
        (lambda d: d.update(kind="pickle"), "bad 'kind'"),
        (lambda d: d["files"][0].update(size=-1), "bad 'size'"),
        (lambda d: d["files"][0].update({d["checksum"]: "xyz"}), "bad 'crc32c?'"),
        (lambda d: d["files"][0].update({d["checksum"]: "ABCDEF01"}), "bad 'crc32c?'"),
        (lambda d: d.update(checksum="sha1"), "bad 'checksum'"),
        (lambda d: d["files"].append(d["files"][0]), "unique names"),
        (lambda d: d.update(format="other/9"), "bad 'format'"),
    ],
)
def test_forged_markers_are_refused(saved, edit, match: str) -> None:
    m, loc, _ = saved
    _forge(loc, edit)
    assert m.steps() == [1]
    with pytest.raises(CheckpointError, match=match):
        m.restore(2)


def test_names_from_the_folder_listing_are_not_trusted(medium) -> None:
    loc = open_location(medium.uri, **medium.options)
    for name in ("step-12", "step-0000000000001", "step-00000000000x", "step-000000000001-x"):
        loc.write_bytes(f"{name}/COMMIT.json", b"{}")
    m = CheckpointManager(medium.uri, is_leader=True, **medium.options)
    assert m.steps() == [] and m.restore() is None
    m.save(1, b"1")
    assert m.steps() == [1]


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_large_files_are_checked_too(medium, damage: str) -> None:
    # Large files take other paths: a memory map on a local disk, batched CRC feeding on gs://.
    m = CheckpointManager(medium.uri, is_leader=True, **medium.options)
    big = os.urandom(9 << 20)
    m.save(1, big)
    ckpt = m.restore(1)
    assert ckpt is not None and ckpt.data == big
    loc = open_location(medium.uri, **medium.options)
    folder = Manifest.from_marker(loc.read_bytes("step-000000000001/COMMIT.json"), "t").folder
    name = f"step-000000000001/{folder}/data"
    data = bytearray(big)
    if damage == "flip":
        data[len(data) - 5] ^= 0x80
    else:
        del data[-1]
    loc.write_bytes(name, data)
    match = "CRC-32|CRC32C" if damage == "flip" else rf"size.*{len(big) - 1} bytes"
    with pytest.raises(CheckpointError, match=match):
        m.restore(1)
