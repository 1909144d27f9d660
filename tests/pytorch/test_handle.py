"""The handle's words: resume, save_checkpoint, save_model, report and close, by its environment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from cluster_run import local_run

import vtrain
from vtrain.checkpoints import CheckpointManager

SCRIPT = [str(Path(__file__).parent / "scripts" / "handle_words.py")]


def test_on_a_gloo_cluster_every_word_follows_the_handles_environment(tmp_path: Path) -> None:
    results, out = tmp_path / "r", tmp_path / "out"
    results.mkdir()
    run = local_run(out, ["--workers", "1"], SCRIPT, RESULTS=str(results))
    assert run.returncode == 0, run.output
    chief, worker = (
        json.loads((results / f"{r}.json").read_text()) for r in ("chief-0", "worker-0")
    )
    assert (chief["rank"], chief["is_leader"], worker["rank"], worker["is_leader"]) == (
        0,
        True,
        1,
        False,
    )
    assert chief["distributed"] and worker["distributed"]
    assert not chief["preempted"] and not worker["preempted"]
    # resume says where it went on from, once, on the leader.
    assert run.logs["chief-0"].count("vtrain: no committed checkpoint; starting fresh") == 1
    assert "vtrain: resumed from " in run.logs["chief-0"]
    assert "vtrain: resumed from " not in run.logs["worker-0"]

    # resume and save_checkpoint: one manager, the handle's folder; the leader saves.
    step = str(results / "checkpoints" / "step-000000000007")
    assert chief["directory"] == worker["directory"] == str(results / "checkpoints")
    assert (chief["saved"], worker["saved"]) == (step, None)
    for replica in (chief, worker):
        assert replica["before"] == [False, 0, None, {}]
        assert replica["after"] == [True, 7, step, {"epoch": 3, "note": "x"}]
        assert replica["resumed"] == chief["weights"] != worker["weights"]
        assert replica["momentum"] == chief["expected_momentum"] != worker["expected_momentum"]

    # report: the leader writes the metric file its environment names, and nobody else.
    assert (chief["reported"], worker["reported"]) == (True, False)
    metrics = [json.loads(m) for m in (results / "chief-0.metrics").read_text().splitlines()]
    assert [(m["loss"], m["global_step"]) for m in metrics] == [("0.25", "7")]
    assert not (results / "worker-0.metrics").exists()

    # save_model: the leader writes the model folder of its environment.
    assert (chief["model"], worker["model"]) == (str(results / "model" / "model.pt"), None)
    saved = torch.load(results / "model" / "model.pt", weights_only=True)
    assert torch.cat([v.flatten() for v in saved.values()]).tolist() == chief["weights"]

    # The job's own places, which os.environ named, got nothing.
    assert not list(out.glob("hypertune/*.metrics"))
    assert not list(out.glob("model/*")) and not list(out.glob("checkpoints/**/step-*"))


def test_alone_the_model_and_metric_go_where_the_handles_environment_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIP_MODEL_DIR", str(tmp_path / "process-model"))
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(tmp_path / "process.metrics"))
    env = {
        "AIP_MODEL_DIR": str(tmp_path / "handle-model"),
        "CLOUD_ML_HP_METRIC_FILE": str(tmp_path / "handle.metrics"),
    }
    handle = vtrain.plugins.get("pytorch").configure(environ=env)
    model = torch.nn.Linear(2, 1)
    assert handle.save_model(model) == str(tmp_path / "handle-model" / "model.pt")
    assert handle.save_model(model, "weights.pt") == str(tmp_path / "handle-model" / "weights.pt")
    assert handle.report(0.5, "loss", step=1)
    assert json.loads((tmp_path / "handle.metrics").read_text())["loss"] == "0.5"
    assert not (tmp_path / "process-model").exists() and not (tmp_path / "process.metrics").exists()


def test_close_raises_what_failed_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A failure on the save thread surfaces only where the save is waited for: close() must be.
    def failing_save(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    handle = vtrain.plugins.get("pytorch").configure(environ={"AIP_CHECKPOINT_DIR": str(tmp_path)})
    monkeypatch.setattr(torch, "save", failing_save)
    assert handle.save_checkpoint(4, torch.nn.Linear(2, 1)) == str(tmp_path / "step-000000000004")
    with pytest.raises(
        vtrain.CheckpointError, match=r"background save of step 4 failed.*disk full"
    ):
        handle.close()
    assert CheckpointManager(tmp_path, is_leader=False, environ={}).steps() == []


def test_a_fresh_start_resumes_nothing_and_leaves_the_model(tmp_path: Path) -> None:
    handle = vtrain.plugins.get("pytorch").configure(environ={"AIP_CHECKPOINT_DIR": str(tmp_path)})
    model = torch.nn.Linear(2, 1)
    weights = model.weight.detach().clone()
    found = handle.resume(model)
    assert not found and (found.done, found.uri, dict(found.extra)) == (0, None, {})
    assert torch.equal(model.weight, weights)
    handle.close()


def test_a_sigterm_on_one_worker_is_every_trainers_and_the_save_after_it_is_the_last(
    tmp_path: Path,
) -> None:
    results, out = tmp_path / "r", tmp_path / "out"
    results.mkdir()
    script = [str(Path(__file__).parent / "scripts" / "preempted.py")]
    run = local_run(out, ["--workers", "1", "--max-restarts", "0"], script, RESULTS=str(results))
    seen = {r: json.loads((results / f"{r}.json").read_text()) for r in ("chief-0", "worker-0")}
    assert seen == {r: {"before": False, "after": True} for r in seen}, run.output
    # The leader committed the step, said so, and every trainer left with 143, not 0.
    assert "vtrain: preempted (SIGTERM): committed step 5 (" in run.logs["chief-0"], run.output
    assert run.returncode != 0, run.output
    found = CheckpointManager(out / "checkpoints", is_leader=False, environ={})
    assert found.steps() == [5], run.output


def test_alone_a_step_saved_with_extra_resumes_with_it_and_logs_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    handle = vtrain.plugins.get("pytorch").configure(environ={"AIP_CHECKPOINT_DIR": str(tmp_path)})
    model = torch.nn.Linear(2, 1)
    with handle:
        assert not handle.distributed and not handle.preempted
        where = handle.save_checkpoint(7, model, note="x")
    fresh = torch.nn.Linear(2, 1)
    caplog.clear()
    found = (
        vtrain.plugins.get("pytorch")
        .configure(environ={"AIP_CHECKPOINT_DIR": str(tmp_path)})
        .resume(fresh)
    )
    assert (found.done, found.uri, dict(found.extra)) == (7, where, {"note": "x"})
    assert torch.equal(fresh.weight, model.weight)
    assert caplog.messages == [f"vtrain: resumed from {where} (7 done)"]


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        ((), r"save_checkpoint: takes a model and an optimizer, got 0 objects"),
        ((1, 2, 3), r"save_checkpoint: takes a model and an optimizer, got 3 objects"),
    ],
)
def test_a_save_of_other_objects_is_refused(tmp_path: Path, objects: tuple, message: str) -> None:
    handle = vtrain.plugins.get("pytorch").configure(environ={"AIP_CHECKPOINT_DIR": str(tmp_path)})
    with handle, pytest.raises(vtrain.UsageError, match=message):
        handle.save_checkpoint(1, *objects)


def test_a_model_or_optimizer_by_keyword_is_refused_not_saved_as_extra(tmp_path: Path) -> None:
    handle = vtrain.plugins.get("pytorch").configure(environ={"AIP_CHECKPOINT_DIR": str(tmp_path)})
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with handle:
        with pytest.raises(
            vtrain.UsageError,
            match=r"save_checkpoint: the model and the optimizer go before the keywords "
            r"\(got \['optimizer'\]\)",
        ):
            handle.save_checkpoint(1, model, optimizer=optimizer)
        with pytest.raises(vtrain.UsageError, match=r"^resume: takes no keywords"):
            handle.resume(model, optimizer=optimizer)
    assert CheckpointManager(tmp_path, is_leader=False, environ={}).steps() == []


def test_batches_are_a_loader_of_the_stream_and_a_save_holds_its_position(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "training-0.jsonl").write_text("".join(json.dumps({"x": i}) + "\n" for i in range(10)))
    env = {"AIP_CHECKPOINT_DIR": str(tmp_path / "c"), "AIP_TRAINING_DATA_URI": f"{data}/*.jsonl"}
    handle = vtrain.plugins.get("pytorch").configure(environ=env)
    stream = handle.stream("training")
    loader = handle.batches(stream, batch_size=4, transform=lambda r: r["x"])
    batches = iter(loader)
    assert next(batches).tolist() == [0, 1, 2, 3]
    with handle:
        handle.save_checkpoint(1, torch.nn.Linear(1, 1), data=loader, blocking=True)
    found = vtrain.plugins.get("pytorch").configure(environ=env).resume(torch.nn.Linear(1, 1))
    rest = handle.stream("training", resume=found)
    assert [r["x"] for r in rest] == [4, 5, 6, 7, 8, 9]
