"""The TF handle in the core's words: world_size, checkpoints, resume, save_model, report."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import configure
from keras_state import X, Y, same, state, tiny
from platform_examples import tf_config

from vtrain import ClusterInfo
from vtrain.checkpoints.layout import step_folder
from vtrain.hypertune.metric_file import metric_values, read_entries
from vtrain.plugins.handle import Resumed

pytest.importorskip("tensorflow")

TRAINERS = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"]}
WITH_PS = {**TRAINERS, "ps": ["127.0.0.1:4"]}

# (the replica, its rank, world_size: trainers in the collective)
PLACES = [
    (None, 0, 1),  # alone
    (tf_config(TRAINERS, "chief", 0), 0, 3),  # MultiWorkerMirroredStrategy: chief + workers
    (tf_config(TRAINERS, "worker", 1), 2, 3),
    (tf_config(WITH_PS, "chief", 0), 0, 2),  # parameter-server training: its workers
    (tf_config(WITH_PS, "ps", 0), None, 0),  # not a trainer
    (tf_config(TRAINERS, "evaluator", 0), None, 0),
]


def handle_of(config: str | None, **environ: str) -> Any:
    """A handle for a replica of `config`, built without its strategy (nothing here uses it)."""
    from vtrain_tensorflow import TensorFlowHandle

    env = {**environ, **({} if config is None else {"TF_CONFIG": config})}
    info = ClusterInfo.from_env(env)
    return TensorFlowHandle(info, info.rank == 0, None, "tf_keras", environ=env)


@pytest.mark.parametrize("config, rank, world_size", PLACES)
def test_rank_and_world_size_count_the_trainers_of_the_collective(
    config: str | None, rank: int | None, world_size: int
) -> None:
    handle = handle_of(config)
    assert (handle.rank, handle.world_size) == (rank, world_size)


def test_the_parameter_server_coordinator_reads_the_whole_input(tmp_path: Path) -> None:
    # Keras gives every worker the dataset the coordinator builds: each must see all of it.
    for i in range(4):
        (tmp_path / f"part-{i}.jsonl").write_text('{"x": 1}\n')
    data = {"AIP_TRAINING_DATA_URI": str(tmp_path / "part-*.jsonl")}
    coordinator = handle_of(tf_config(WITH_PS, "chief", 0), **data)
    assert coordinator.world_size == 2 and len(coordinator.share()) == 4
    assert coordinator.shard(["a", "b", "c"]) == ["a", "b", "c"]
    # Under MultiWorkerMirroredStrategy each trainer reads its own share.
    worker = handle_of(tf_config(TRAINERS, "worker", 1), **data)
    assert [Path(f).name for f in worker.share()] == ["part-2.jsonl"]


def test_resume_says_what_it_loaded_in_a_resumed(handle: Any) -> None:
    keras = handle.keras
    assert handle.checkpoints.directory == os.path.join(handle.context.checkpoint_dir, "keras")
    assert handle.resume(tiny(keras)) == Resumed()  # nothing yet: falsy, 0 done

    model = tiny(keras)
    model.fit(
        X,
        Y,
        batch_size=8,
        epochs=2,
        shuffle=False,
        verbose=0,
        callbacks=[handle.model_checkpoint()],
    )
    fresh = tiny(keras)
    resumed = handle.resume(fresh)
    step = handle.checkpoints.latest_step()
    assert resumed and resumed.done == 2  # fit's initial_epoch
    assert resumed.uri == handle.checkpoints.location.join(step_folder(step)).uri
    assert same(state(fresh), state(model))


def test_save_model_and_report_follow_the_environment_the_handle_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The process's own environment points elsewhere: nothing may land there.
    elsewhere = tmp_path / "os-environ"
    monkeypatch.setenv("AIP_MODEL_DIR", f"{elsewhere}/model/")
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(elsewhere / "metrics"))
    monkeypatch.setenv("VTRAIN_OUTPUT_DIR", str(elsewhere / "out"))
    given = tmp_path / "given"
    handle = configure(
        AIP_MODEL_DIR=f"{given}/model/",
        CLOUD_ML_HP_METRIC_FILE=str(given / "metrics"),
        VTRAIN_OUTPUT_DIR=str(given / "out"),
    )
    keras = handle.keras
    model = tiny(keras)
    callbacks = handle.callbacks(monitor="loss", tag="loss", backup=False, tensorboard=False)
    history = model.fit(X, Y, batch_size=8, epochs=2, shuffle=False, verbose=0, callbacks=callbacks)
    assert handle.report(0.25, "score", step=2)

    saved = handle.save_model(model)
    assert saved == str(given / "model" / "model.keras")
    loaded = keras.models.load_model(saved)
    assert same(loaded.get_weights(), model.get_weights())
    entries = read_entries(str(given / "metrics"))
    assert metric_values(entries, "loss") == pytest.approx(history.history["loss"])
    assert metric_values(entries, "score") == [0.25]
    assert not elsewhere.exists()


def test_close_waits_for_the_last_background_commit(handle: Any) -> None:
    from vtrain.checkpoints import Snapshot

    assert handle._made_checkpoints() is None  # nothing made yet: close would wait for none
    written: list[str] = []

    def slow(folder: str) -> None:
        time.sleep(1)  # runs on the background thread: close() must outwait it
        Path(folder, "state").write_bytes(b"x")
        written.append(folder)

    handle.checkpoints.save(7, Snapshot(slow), blocking=False)
    handle.close()
    assert written and handle.checkpoints.steps() == [7]
    handle.close()  # safe twice: the second returns at once
