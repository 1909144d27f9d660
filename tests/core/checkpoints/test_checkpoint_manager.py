"""`CheckpointManager` on each medium: save, list, restore, retention, leftovers, replicas."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from logged import warned

from vtrain.checkpoints import CheckpointManager
from vtrain.checkpoints.lease import LEASE
from vtrain.errors import CheckpointError, UsageError
from vtrain.storage import open_location


def manager(medium, **kwargs) -> CheckpointManager:
    kwargs.setdefault("is_leader", True)
    return CheckpointManager(medium.uri, **medium.options, **kwargs)


def test_nothing_saved_yet(medium) -> None:
    m = manager(medium)
    assert m.steps() == [] and m.latest_step() is None and m.restore() is None


def test_bytes_round_trip(medium) -> None:
    m = manager(medium)
    data = os.urandom(5 << 20) + b"tail"  # above the size where the CRC runs on a thread
    uri = m.save(7, data)
    assert uri.endswith("/step-000000000007")
    ckpt = m.restore()
    assert ckpt is not None and ckpt.step == 7 and ckpt.data == data
    assert ckpt.manifest.kind == "bytes" and ckpt.manifest.size == len(data)


def test_mapping_round_trip_with_subfolders(medium) -> None:
    files = {"model.bin": os.urandom(1000), "opt/state.bin": b"", "meta.json": b"{}"}
    m = manager(medium)
    m.save(3, files)
    ckpt = m.restore(3)
    assert ckpt is not None and dict(ckpt.files) == files


def test_callable_round_trip(medium, tmp_path: Path) -> None:
    def write(folder: str) -> None:
        Path(folder, "weights.bin").write_bytes(b"w" * 3000)
        Path(folder, "variables").mkdir()
        Path(folder, "variables", "v.data").write_bytes(b"v")

    m = manager(medium)
    m.save(11, write)
    ckpt = m.restore(into=str(tmp_path / "restored"))
    assert ckpt is not None and ckpt.directory is not None and ckpt.files == {}
    assert Path(ckpt.directory, "weights.bin").read_bytes() == b"w" * 3000
    assert Path(ckpt.directory, "variables", "v.data").read_bytes() == b"v"
    with pytest.raises(CheckpointError, match="not saved from bytes.*'directory'"):
        _ = ckpt.data


def test_steps_are_sorted_and_zero_padded(medium) -> None:
    m = manager(medium)
    for step in (10, 2, 100, 0):
        m.save(step, str(step).encode())
    assert m.steps() == [0, 2, 10, 100] and m.latest_step() == 100
    names = open_location(medium.uri, **medium.options).list()
    # The writer's lease is there while `m` lives (see test_checkpoint_lease.py).
    assert names == sorted(names) == [LEASE] + [f"step-{s:012d}" for s in (0, 2, 10, 100)]
    assert bytes(m.restore(2).data) == b"2"  # type: ignore[union-attr]


def test_keep_newest(medium) -> None:
    m = manager(medium, keep=2)
    for step in range(5):
        m.save(step, b"x")
    assert m.steps() == [3, 4]


def test_keep_every(medium) -> None:
    m = manager(medium, keep=1, keep_every=3)
    for step in range(8):
        m.save(step, b"x")
    assert m.steps() == [0, 3, 6, 7]


def test_keep_all_by_default(medium) -> None:
    m = manager(medium)
    for step in range(4):
        m.save(step, b"x")
    assert m.steps() == [0, 1, 2, 3]


def test_saving_a_step_again_replaces_it(medium) -> None:
    m = manager(medium)
    m.save(5, {"a": b"old", "b": b"old"})
    m.save(5, {"a": b"new"})
    ckpt = m.restore(5)
    assert ckpt is not None and dict(ckpt.files) == {"a": b"new"}
    step_folder = open_location(medium.uri, **medium.options).join("step-000000000005")
    assert len(step_folder.list()) == 2  # the marker and one data folder: the old one is gone


def test_uncommitted_leftovers_are_ignored_then_cleaned(medium) -> None:
    loc = open_location(medium.uri, **medium.options)
    m = manager(medium)
    m.save(1, b"one")
    committed = loc.join("step-000000000001")
    # What killed saves leave: a step without a marker (only where the marker is written
    # last; a local step appears by rename, marker included), a stray data folder, a temp.
    if medium.name != "local":
        loc.write_bytes("step-000000000002/data-00112233445566ff/data", b"partial")
    committed.write_bytes("data-ffeeddccbbaa9988/data", b"half of a re-save")
    loc.write_bytes(".tmp-step-000000000003-abcdef/x", b"tmp")
    loc.write_bytes("notes.txt", b"the user's own file")
    assert m.steps() == [1] and m.latest_step() == 1
    assert bytes(m.restore().data) == b"one"  # type: ignore[union-attr]
    removed = manager(medium).cleanup()
    expected = [".tmp-step-000000000003-abcdef", "step-000000000001/data-ffeeddccbbaa9988"]
    assert sorted(removed) == sorted(expected + ["step-000000000002"] * (medium.name != "local"))
    assert loc.list() == [LEASE, "notes.txt", "step-000000000001"]  # `m` still holds the folder


def test_a_damaged_marker_is_reported_and_kept(medium, caplog) -> None:
    check_damaged_step_is_kept(medium, "garbage marker", caplog)


def test_a_local_step_without_marker_is_damage_not_a_leftover(tmp_path, caplog) -> None:
    # A local step appears by one rename, marker included: without one, it was damaged.
    local = SimpleNamespace(name="local", uri=str(tmp_path / "root"), options={"environ": {}})
    check_damaged_step_is_kept(local, "no marker", caplog)


def check_damaged_step_is_kept(medium, damage: str, caplog) -> None:
    loc = open_location(medium.uri, **medium.options)
    m = manager(medium, keep=1)
    m.save(1, b"one")
    m.save(2, b"two")
    step2 = loc.join("step-000000000002")
    if damage == "garbage marker":
        step2.write_bytes("COMMIT.json", b'{"manifest": {"step": 2')
    else:
        step2.remove("COMMIT.json")
    data_before = step2.list()
    again = manager(medium, keep=1)
    with warned(caplog, r"^vtrain: .*step 2 does not verify"):
        restored = again.restore()
    # The older step is not there any more (keep=1): nothing intact to resume, said loudly.
    assert restored is None
    with warned(caplog, r"step-000000000002: a finished step that does not"):
        again.save(3, b"three")
    assert loc.join("step-000000000002").list() == data_before  # not cleaned, not retained away
    assert again.steps() == [3]
    if medium.name == "local":
        with warned(caplog, r"the damaged step was moved to damaged-step-"):
            again.save(2, b"two again")
        aside = [n for n in loc.list() if n.startswith("damaged-step-000000000002-")]
        assert len(aside) == 1 and loc.join(aside[0]).list() == data_before


def test_first_save_cleans_up(medium) -> None:
    loc = open_location(medium.uri, **medium.options)
    if medium.name == "local":
        loc.write_bytes(".tmp-step-000000000009-00aa/data-00112233445566ff/data", b"partial")
    else:
        loc.write_bytes("step-000000000009/data-00112233445566ff/data", b"partial")
    manager(medium).save(10, b"ten")
    assert [n for n in loc.list() if n != LEASE] == ["step-000000000010"]


def test_a_worker_writes_privately_and_reads_the_chiefs(medium, tmp_path: Path) -> None:
    chief = manager(medium)
    chief.save(4, b"chief's")
    worker = manager(medium, is_leader=False, private_directory=str(tmp_path / "private"))
    worker.save(5, b"worker's")
    assert worker.steps() == [4] and bytes(worker.restore().data) == b"chief's"  # type: ignore[union-attr]
    assert sorted(os.listdir(tmp_path / "private")) == [LEASE, "step-000000000005"]
    assert chief.steps() == [4]


def test_a_worker_without_a_private_folder_gets_a_temporary_one(
    medium, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # keep /tmp clean
    worker = manager(medium, is_leader=False)
    uri = worker.save(1, b"w")
    assert worker.write_location.uri != worker.directory and uri.startswith(
        worker.write_location.uri
    )
    assert os.path.dirname(worker.write_location.uri) == str(tmp_path)
    worker.save(2, b"w")
    assert worker.write_location.list() == ["step-000000000002"]  # private keeps only the newest
    assert worker.steps() == []


def test_a_private_temporary_folder_goes_with_its_manager(medium) -> None:
    import gc

    worker = manager(medium, is_leader=False)
    worker.save(1, b"w")
    private = worker.write_location.path
    assert private is not None and os.path.isdir(private)
    del worker
    gc.collect()
    assert not os.path.exists(private)


def test_the_trial_decides_the_folder_whether_or_not_is_leader_is_given(tmp_path: Path) -> None:
    from platform_examples import VERTEX_CLUSTER, cluster_spec

    env = {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool0", 0, trial="3")}
    given = CheckpointManager(str(tmp_path), is_leader=True, environ=env)
    detected = CheckpointManager(str(tmp_path), environ=env)
    assert given.directory == detected.directory == f"{tmp_path}/trial-3"


def test_a_failed_step_leaves_nothing_in_the_into_folder(tmp_path: Path, caplog) -> None:
    def writer(files: dict[str, bytes]):  # type: ignore[no-untyped-def]
        def write(folder: str) -> None:
            for name, data in files.items():
                Path(folder, name).write_bytes(data)

        return write

    mount = tmp_path / "gcs"
    (mount / "bucket").mkdir(parents=True)
    m = CheckpointManager("gs://bucket/ck", is_leader=True, gcs_mount=str(mount), environ={})
    m.save(1, writer({"model": b"model@1"}))
    m.save(2, writer({"optimizer": b"opt@2", "model": b"model@2"}))
    step2 = mount / "bucket" / "ck" / "step-000000000002"
    (data,) = [p for p in step2.iterdir() if p.is_dir()]
    (data / "optimizer").write_bytes(b"corrupt")  # after "model", which copies intact
    into = tmp_path / "into"
    with warned(caplog, "trying an older step"):
        ckpt = m.restore(into=str(into))
    assert ckpt is not None and ckpt.step == 1
    assert sorted(os.listdir(into)) == ["model"] and (into / "model").read_bytes() == b"model@1"


def test_per_trial_folders_under_tuning(medium) -> None:
    env = {**medium.options["environ"], "CLOUD_ML_TRIAL_ID": "7"}
    options = {**medium.options, "environ": env}
    m = CheckpointManager(medium.uri, is_leader=True, **options)
    assert m.directory.endswith("/trial-7")
    m.save(1, b"t7")
    other = CheckpointManager(
        medium.uri, is_leader=True, **{**options, "environ": {**env, "CLOUD_ML_TRIAL_ID": "8"}}
    )
    assert other.latest_step() is None
    assert CheckpointManager(medium.uri, is_leader=True, per_trial=False, **options).steps() == []


def test_the_platforms_own_folder_is_not_nested(tmp_path: Path) -> None:
    env = {"CLOUD_ML_TRIAL_ID": "3", "AIP_CHECKPOINT_DIR": f"{tmp_path}/3/checkpoints/"}
    m = CheckpointManager(env["AIP_CHECKPOINT_DIR"], is_leader=True, environ=env)
    assert m.directory == f"{tmp_path}/3/checkpoints"


@pytest.mark.parametrize(
    ("step", "match"),
    [
        (-1, "not a checkpoint step.*-1"),
        (10**12, "from 0 to 999999999999"),
        (1.5, "not a checkpoint step"),
        (True, "not a checkpoint step"),
        ("3", "not a checkpoint step.*'3'"),
    ],
)
def test_bad_steps(medium, step: object, match: str) -> None:
    m = manager(medium)
    with pytest.raises(CheckpointError, match=match):
        m.save(step, b"x")  # type: ignore[arg-type]
    with pytest.raises(CheckpointError, match=match):
        m.restore(step)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        (42, "cannot save this payload.*'int'.*callable"),
        ({"../x": b"1"}, "could escape.*'../x'"),
        ({"a": "text"}, "not bytes.*'str'"),
        ({}, "nothing to save"),
        (lambda folder: None, "wrote no files"),
    ],
)
def test_bad_payloads(medium, payload: object, match: str) -> None:
    with pytest.raises(CheckpointError, match=match):
        manager(medium).save(1, payload)  # type: ignore[arg-type]


def test_restoring_an_uncommitted_step_lists_the_committed(medium) -> None:
    m = manager(medium)
    m.save(1, b"1")
    m.save(3, b"3")
    with pytest.raises(
        CheckpointError, match=r"step 2: step is not committed.*committed steps are \[1, 3\]"
    ):
        m.restore(2)


@pytest.mark.parametrize(("argument", "value"), [("keep", 0), ("keep_every", -2), ("keep", 1.0)])
def test_bad_retention(tmp_path: Path, argument: str, value: object) -> None:
    with pytest.raises(UsageError, match=f"{argument}: not a positive count"):
        CheckpointManager(tmp_path, is_leader=True, environ={}, **{argument: value})  # type: ignore[arg-type]


def test_defaults_come_from_the_platform(tmp_path: Path) -> None:
    spec = {
        "cluster": {"workerpool0": ["c:2222"], "workerpool1": ["w0:2222", "w1:2222"]},
        "task": {"type": "workerpool1", "index": 1, "trial": "5"},
        "environment": "cloud",
    }
    env = {"CLUSTER_SPEC": json.dumps(spec), "VTRAIN_OUTPUT_DIR": str(tmp_path)}
    worker = CheckpointManager(environ=env)
    assert not worker.is_leader
    assert worker.directory == str(tmp_path / "5" / "checkpoints")
    spec["task"] = {"type": "workerpool0", "index": 0, "trial": "5"}
    chief = CheckpointManager(environ={**env, "CLUSTER_SPEC": json.dumps(spec)})
    assert chief.is_leader and chief.directory == worker.directory
    chief.save(1, b"c")
    assert worker.latest_step() == 1


def test_a_new_process_saving_a_step_again_replaces_it(medium) -> None:
    manager(medium).save(5, {"a": b"old"})
    manager(medium).save(5, {"b": b"new"})  # a restarted replica re-saving the step it resumed
    m = manager(medium)
    assert dict(m.restore(5).files) == {"b": b"new"}  # type: ignore[union-attr]
    step_folder = open_location(medium.uri, **medium.options).join("step-000000000005")
    assert len(step_folder.list()) == 2


def test_a_failing_save_commits_nothing_and_leaves_nothing(medium) -> None:
    def broken(folder: str) -> None:
        Path(folder, "half.bin").write_bytes(b"x" * 100)
        raise RuntimeError("disk full, say")

    m = manager(medium)
    m.save(1, b"good")
    with pytest.raises(RuntimeError, match="disk full"):
        m.save(2, broken)
    assert m.steps() == [1]
    loc = open_location(medium.uri, **medium.options)
    assert loc.list("step-000000000002") == []  # an empty folder at most; no stray files
    assert not [n for n in loc.list() if n.startswith(".tmp-")]


def test_a_temporary_copy_goes_away_on_close(medium, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    m = manager(medium)
    m.save(1, lambda folder: Path(folder, "f").write_bytes(b"f"))
    with m.restore() as ckpt:  # type: ignore[union-attr]
        assert ckpt.directory is not None and Path(ckpt.directory, "f").read_bytes() == b"f"
    copied = medium.name != "local"  # FUSE and gs:// copy; a local disk verifies in place
    assert ckpt.temporary is copied
    assert os.path.exists(ckpt.directory) is not copied


@pytest.mark.parametrize("fuse", [False, True])
def test_a_linked_step_is_read_but_never_written_through(tmp_path, fuse: bool) -> None:
    old_run = CheckpointManager(tmp_path / "old", is_leader=True, fuse=fuse)
    old_run.save(3, {"w": b"older weights"})
    old_run.save(4, {"w": b"old weights"})
    old_files = sorted(p.relative_to(tmp_path) for p in (tmp_path / "old").rglob("*"))
    new = tmp_path / "new"
    new.mkdir()
    (new / "step-000000000004").symlink_to(tmp_path / "old" / "step-000000000004")
    m = CheckpointManager(new, is_leader=True, fuse=fuse, keep=1)
    with m.restore() as warm:  # type: ignore[union-attr]
        assert warm.step == 4 and warm.files["w"] == b"old weights"
    m.save(4, {"w": b"new weights"})  # the same step again: the link is replaced
    assert not (new / "step-000000000004").is_symlink()
    m.save(5, {"w": b"five"})  # retention removes the new step 4
    os.symlink(tmp_path / "old" / "step-000000000003", new / "step-000000000003")
    again = CheckpointManager(new, is_leader=True, fuse=fuse, keep=1)
    again.save(6, {"w": b"six"})  # cleanup, then retention: the link goes, not what it points to
    assert not os.path.lexists(new / "step-000000000003") and again.steps() == [6]
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "old").rglob("*")) == old_files
    assert old_run.restore(4).files["w"] == b"old weights"  # type: ignore[union-attr]
    assert old_run.restore(3).files["w"] == b"older weights"  # type: ignore[union-attr]
