"""model_checkpoint, resume and best with real Keras 3 in this process: choices, files, errors."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import configure
from keras_state import X, Y, recorder, same, scripted, state, tiny
from logged import warned

from vtrain import CheckpointError, UsageError
from vtrain.checkpoints.layout import step_folder

pytest.importorskip("tensorflow")


def fit(model: Any, epochs: int, callbacks: list[Any], initial_epoch: int = 0) -> None:
    model.fit(
        X,
        Y,
        batch_size=8,
        epochs=epochs,
        initial_epoch=initial_epoch,
        shuffle=False,
        callbacks=callbacks,
        verbose=0,
    )


def committed_epochs(handle: Any) -> list[int]:
    from vtrain_tensorflow.keras_checkpoint import records

    return [r.epoch + 1 for r in records(handle.checkpoint_manager())]


# (monitor, mode, the monitored value per epoch, epochs saved, the mode "auto" resolves to)
BEST = [
    ("score", "min", [5.0, 3.0, 4.0, 2.0, 2.5], [1, 2, 4], "min"),
    ("score", "max", [-5.0, -3.0, -4.0, -2.0, -2.5], [1, 2, 4], "max"),
    ("val_loss", "auto", [5.0, 3.0, 4.0, 2.0, 2.5], [1, 2, 4], "min"),
    ("val_accuracy", "auto", [0.5, 0.7, 0.6, 0.9, 0.8], [1, 2, 4], "max"),
]


@pytest.mark.parametrize("monitor, mode, values, saved, resolved", BEST)
def test_save_best_only_keeps_each_improvement_and_best_loads_the_best(
    handle: Any, monitor: str, mode: str, values: list[float], saved: list[int], resolved: str
) -> None:
    keras = handle.keras
    model, states = tiny(keras), {}
    checkpoint = handle.model_checkpoint(monitor=monitor, mode=mode, save_best_only=True)
    fit(model, 5, [scripted(keras, monitor, values), checkpoint, recorder(keras, states)])
    assert committed_epochs(handle) == saved

    best = handle.best()
    assert (best.epoch + 1, best.value) == (4, values[3])
    assert (best.monitor, best.mode) == (monitor, resolved)
    fresh = tiny(keras)
    assert handle.best(fresh) == best
    assert same(state(fresh), states[4])

    # A restarted run must beat the committed best, not its own first epoch: epoch 6 is
    # better than epoch 5 but not than epoch 4, and is not saved; epoch 7 is a new best.
    new_best = values[3] - 1 if resolved == "min" else values[3] + 1
    later = [*values, (values[3] + values[4]) / 2, new_best]
    again = handle.model_checkpoint(monitor=monitor, mode=mode, save_best_only=True)
    fit(model, 7, [scripted(keras, monitor, later), again], initial_epoch=5)
    assert committed_epochs(handle) == [*saved, 7]
    assert handle.best().value == new_best


def test_best_is_the_best_value_not_the_newest(handle: Any) -> None:
    keras = handle.keras
    model, states = tiny(keras), {}
    checkpoint = handle.model_checkpoint(monitor="score", mode="min")  # every epoch
    fit(model, 3, [scripted(keras, "score", [3.0, 1.0, 2.0]), checkpoint, recorder(keras, states)])
    assert committed_epochs(handle) == [1, 2, 3]
    fresh = tiny(keras)
    assert handle.best(fresh).epoch + 1 == 2
    assert same(state(fresh), states[2])


def test_nothing_to_resume_gives_epoch_0_and_no_best(handle: Any) -> None:
    model = tiny(handle.keras)
    before = state(model)
    assert handle.resume(model).done == 0
    assert handle.best() is None and handle.best(model) is None
    assert same(state(model), before)


@pytest.mark.parametrize("weights_only", [False, True])
def test_resume_restores_weights_and_optimizer_of_the_newest_step(
    handle: Any, weights_only: bool
) -> None:
    keras = handle.keras
    model, states = tiny(keras), {}
    checkpoint = handle.model_checkpoint(save_weights_only=weights_only)
    fit(model, 3, [checkpoint, recorder(keras, states)])
    fresh = tiny(keras)
    assert handle.resume(fresh).done == 3
    assert same(state(fresh), states[3])  # Adam's step count and moments included


def test_a_damaged_committed_step_is_never_loaded(
    handle: Any, caplog: pytest.LogCaptureFixture
) -> None:
    keras = handle.keras
    model, states = tiny(keras), {}
    fit(model, 2, [handle.model_checkpoint(), recorder(keras, states)])
    step = handle.checkpoint_manager().latest_step()
    folder = Path(handle.checkpoint_manager().directory, step_folder(step))
    (model_file,) = folder.glob("data-*/model.keras")
    data = bytearray(model_file.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped bit after the commit: the CRC catches it
    model_file.write_bytes(bytes(data))
    fresh = tiny(keras)
    with warned(caplog, r"skipped a damaged checkpoint: .*CRC-32"):
        assert handle.resume(fresh).done == 1
    assert same(state(fresh), states[1])


def truncate(path: Path, how: str) -> None:
    """Damage the file a plain ModelCheckpoint was writing when the VM went away."""
    data = path.read_bytes()
    if how == "flip":
        flipped = bytearray(data)
        # Inside the weights, not the zip's directory: only a CRC check can see it.
        flipped[len(data) // 3] ^= 0xFF
        path.write_bytes(bytes(flipped))
    else:
        path.write_bytes(data[: {"empty": 0, "half": len(data) // 2, "short": len(data) - 1}[how]])


@pytest.mark.parametrize(
    "name, how, given",
    [
        ("ckpt-{epoch:04d}.keras", "empty", False),
        ("ckpt-{epoch:04d}.keras", "half", True),
        ("ckpt-{epoch:04d}.keras", "short", False),
        ("ckpt-{epoch:04d}.keras", "flip", False),
        ("weights.{epoch:02d}-{loss:.2f}.weights.h5", "half", True),
        ("weights.{epoch:02d}.weights.h5", "short", False),
    ],
)
def test_resume_skips_a_torn_plain_modelcheckpoint_file(
    handle: Any, name: str, how: str, given: bool, caplog: pytest.LogCaptureFixture
) -> None:
    keras = handle.keras
    folder = Path(handle.context.checkpoint_dir)
    filepath = str(folder / name)
    model, states = tiny(keras), {}
    weights_only = name.endswith(".weights.h5")
    plain = keras.callbacks.ModelCheckpoint(filepath, save_weights_only=weights_only)
    fit(model, 3, [recorder(keras, states), plain])
    newest = max(p for p in folder.iterdir() if p.is_file())  # epoch 3's, by name
    truncate(newest, how)

    fresh = tiny(keras)
    with warned(caplog, rf"skipped {newest}: torn or incomplete"):
        assert handle.resume(fresh, filepath=filepath if given else None).done == 2
    assert same(state(fresh), states[2])


def test_resume_takes_whichever_checkpoint_is_further_into_training(handle: Any) -> None:
    from vtrain_tensorflow.resume import resume_from

    keras = handle.keras
    folder = handle.context.checkpoint_dir
    plain = keras.callbacks.ModelCheckpoint(os.path.join(folder, "ckpt-{epoch:04d}.keras"))
    model, states = tiny(keras), {}
    fit(model, 2, [handle.model_checkpoint(), plain, recorder(keras, states)])

    def resumed() -> Any:
        fresh = tiny(keras)
        record = resume_from(
            fresh,
            handle.strategy,
            manager=handle.checkpoint_manager(),
            plain=handle.checkpoint_manager(folder).location,
        )
        return record, fresh

    record, fresh = resumed()  # a tie: the committed step, checked byte for byte
    assert record.initial_epoch == 2 and record.uri.endswith(step_folder(8))
    fit(model, 3, [plain, recorder(keras, states)], initial_epoch=2)
    record, fresh = resumed()
    assert record.initial_epoch == 3 and record.uri.endswith("ckpt-0003.keras")
    assert same(state(fresh), states[3])


def test_the_handle_reads_like_the_strategy(handle: Any) -> None:
    import tensorflow as tf

    assert handle.num_replicas_in_sync == 1
    with handle.scope():
        assert tf.distribute.get_strategy() is handle.strategy


@pytest.mark.parametrize(
    "arguments, match",
    [
        ({"mode": "up"}, r"model_checkpoint\(mode=...\): unknown mode \(got 'up'\)"),
        ({"save_freq": 0}, r"save_freq=...\): not a save frequency \(got 0\)"),
        ({"save_freq": "batch"}, r"not a save frequency \(got 'batch'\); expected 'epoch' or"),
        ({"monitor": "f", "save_best_only": True}, r"monitor=...\): cannot tell .* \(got 'f'\)"),
        ({"keep": 0}, r"keep: not a positive count \(got 0\)"),
    ],
)
def test_bad_model_checkpoint_arguments_are_refused(
    handle: Any, arguments: dict[str, Any], match: str
) -> None:
    with pytest.raises(UsageError, match=match):
        handle.model_checkpoint(**arguments)


def test_a_filepath_without_an_epoch_is_refused(handle: Any, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"resume\(filepath=...\): .* has no \{epoch\}"):
        handle.resume(tiny(handle.keras), filepath=str(tmp_path / "best.keras"))


def test_a_bad_grace_is_refused(handle: Any) -> None:
    with pytest.raises(UsageError, match=r"grace: not a grace period \(got 0\)"):
        handle.preemption_callback(grace=0)


def test_a_bad_record_is_refused(tmp_path: Path) -> None:
    from vtrain_tensorflow.keras_checkpoint import KerasCheckpoint

    with pytest.raises(CheckpointError, match=r"vtrain-keras.json: not a vtrain Keras record"):
        KerasCheckpoint.from_json(b'{"format": "other"}', str(tmp_path))
    with pytest.raises(CheckpointError, match=r"bad step, epoch or batch \(got \(-1, 0, 0\)\)"):
        KerasCheckpoint.from_json(
            b'{"format": "vtrain.keras/1", "step": -1, "epoch": 0, "batch": null}', str(tmp_path)
        )


@pytest.mark.timeout(240)
def test_gs_checkpoints_resume_and_plain_files_through_the_emulator(
    gcs_emulator: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bucket = gcs_emulator.new_bucket()
    base = f"gs://{bucket}/job"
    env = {
        **gcs_emulator.environ,
        "AIP_CHECKPOINT_DIR": f"{base}/checkpoints/",
        "AIP_MODEL_DIR": f"{base}/model/",
        "VTRAIN_GCS_MOUNT": str(tmp_path / "no-mount"),  # the client, not a FUSE mount
        "VTRAIN_OUTPUT_DIR": str(tmp_path / "out"),
    }
    handle = configure(**env)
    keras = handle.keras
    model, states = tiny(keras), {}
    checkpoint = handle.model_checkpoint(monitor="loss", save_best_only=True, keep=2)
    fit(model, 3, [checkpoint, recorder(keras, states)])
    client = gcs_emulator.client()
    names = {b.name for b in client.list_blobs(bucket, prefix="job/checkpoints/keras/")}
    assert any(n.endswith("/COMMIT.json") for n in names), names

    fresh = tiny(keras)
    assert handle.resume(fresh).done == 3
    assert same(state(fresh), states[3])
    assert handle.best(fresh).epoch + 1 == 3
    assert handle.save_model(fresh) == f"{base}/model/model.keras"

    # A plain ModelCheckpoint's files on gs://, the newest cut short: resume names and skips it.
    local = tmp_path / "plain"
    fit(
        model,
        5,
        [
            keras.callbacks.ModelCheckpoint(str(local / "ckpt-{epoch:04d}.keras")),
            recorder(keras, states),
        ],
        initial_epoch=3,
    )
    truncate(local / "ckpt-0005.keras", "half")
    for epoch in (4, 5):
        blob = client.bucket(bucket).blob(f"job/checkpoints/ckpt-{epoch:04d}.keras")
        blob.upload_from_filename(str(local / f"ckpt-{epoch:04d}.keras"))
    fresh = tiny(keras)
    with warned(caplog, rf"skipped {base}/checkpoints/ckpt-0005.keras: torn"):
        assert handle.resume(fresh).done == 4
    assert same(state(fresh), states[4])
    assert zipfile.is_zipfile(local / "ckpt-0004.keras")
