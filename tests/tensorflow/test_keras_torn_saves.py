"""SIGKILL a Keras job while it saves, again and again: resume never loads a torn checkpoint.

Both kinds of save run side by side, every batch: handle.model_checkpoint() on
a local disk and on a folder with Cloud Storage FUSE semantics (no atomic
rename: the commit marker goes last), and a plain ModelCheckpoint whose newest
file a kill cuts short, for resume to skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from keras_kill_child import run_kills

pytest.importorskip("tensorflow")

# (kills, longest wait after the child is ready): a save cycle takes tens of milliseconds.
KILLS = {"local": (20, 0.3), "fuse": (12, 0.3)}


@pytest.mark.timeout(400)
@pytest.mark.parametrize("medium", sorted(KILLS))
def test_kills_during_saves_never_resume_from_a_torn_checkpoint(
    medium: str, tmp_path: Path
) -> None:
    environ = {"VTRAIN_OUTPUT_DIR": str(tmp_path / "out")}
    folder = tmp_path / "checkpoints"
    if medium == "fuse":
        mount = tmp_path / "gcs"
        folder = mount / "bucket" / "checkpoints"
        environ.update(VTRAIN_GCS_MOUNT=str(mount), AIP_CHECKPOINT_DIR="gs://bucket/checkpoints/")
    else:
        environ["AIP_CHECKPOINT_DIR"] = str(folder) + "/"
    folder.mkdir(parents=True)
    config = {"environ": environ, "plain": str(folder / "ckpt-{epoch:04d}.keras")}
    seed = int.from_bytes(os.urandom(4), "big")
    kills, max_delay = KILLS[medium]
    report = run_kills(config, kills, seed=seed, max_delay=max_delay)
    print(
        f"{medium}: seed {seed}, {report.kills} kills, {report.epochs_committed} epochs, "
        f"{report.torn_plain_files} torn plain files skipped, "
        f"{report.uncommitted_saves} saves left uncommitted, {report.seconds:.0f} s"
    )
    assert report.kills == kills
    assert report.epochs_committed > 0
