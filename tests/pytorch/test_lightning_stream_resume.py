"""Lightning resumes its data exactly: a StreamLoader's position is committed with the Trainer
state, taken after the batch that trained (not the one Lightning fetched ahead), and a DDP job
killed mid-epoch on 3 processes finishes the epoch on 2, each record trained once."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import lightning as L
import pytest
import torch
from cluster_run import local_run
from test_stream_resume import write_split

import vtrain
from vtrain import UsageError
from vtrain.data.saved_position import POSITION_FILE
from vtrain_pytorch.lightning import (
    StreamLoader,
    VtrainCheckpoint,
    resume_path,
    resumed,
    trainer_options,
)
from vtrain_pytorch.lightning.stream_loader import gather_position

SCRIPT = str(Path(__file__).parent / "scripts" / "lightning_stream.py")


def ids_of(records: list[dict[str, Any]]) -> torch.Tensor:
    return torch.tensor([r["id"] for r in records], dtype=torch.long)


class Crash(Exception):
    """Raised after a step, as a replica that dies there."""


class Ids(L.LightningModule):
    """A linear model of the ids; `trained` holds (step, ids) of every step, from training_step."""

    def __init__(self, crash_after: int = 0) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(1, 1)
        self.crash_after = crash_after
        self.trained: list[tuple[int, list[int]]] = []

    def training_step(self, batch: torch.Tensor, index: int) -> torch.Tensor:
        self.trained.append((self.trainer.global_step + 1, batch.tolist()))
        return self.layer(batch.float().unsqueeze(1) / 100).pow(2).mean()

    def on_train_batch_end(self, outputs: Any, batch: Any, index: int) -> None:
        if self.crash_after and self.trainer.global_step == self.crash_after:
            raise Crash(f"after step {self.crash_after}")

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)


def fit(tmp_path: Path, model: Ids, epochs: int = 1) -> Any:
    """One process: resume the newest commit under `tmp_path`, fit on the stream's rest."""
    env = {
        "AIP_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
        "AIP_TENSORBOARD_LOG_DIR": str(tmp_path / "logs"),
        "AIP_TRAINING_DATA_URI": str(tmp_path / "data" / "*.jsonl"),
    }
    handle = vtrain.plugins.get("pytorch").configure(environ=env)
    options = trainer_options(handle=handle, every_n_train_steps=2)
    ckpt = resume_path(options)
    stream = handle.stream(resume=resumed(options), shuffle_seed=3, buffer=8)
    loader = StreamLoader(stream, batch_size=3, collate_fn=ids_of)
    trainer = L.Trainer(
        max_epochs=epochs, enable_progress_bar=False, enable_model_summary=False, **options
    )
    try:
        trainer.fit(model, loader, ckpt_path=ckpt)
    finally:
        handle.close()
    return trainer


def test_a_mid_epoch_commit_holds_the_batch_trained_not_the_one_fetched_ahead(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    every = write_split(tmp_path / "data", "training", 3, 10)  # 30 records: 10 steps of 3
    first = Ids(crash_after=5)  # commits at steps 2 and 4, dies after step 5
    with pytest.raises(Crash):
        fit(tmp_path, first)
    assert [s for s, _ in first.trained] == [1, 2, 3, 4, 5]
    assert list((tmp_path / "ckpt" / "step-000000000004").glob(f"data-*/{POSITION_FILE}"))

    second = Ids()
    trainer = fit(tmp_path, second)
    line = "vtrain: resumed step 4 from 1 workers on 1; "
    assert any(m.startswith(line) for m in caplog.messages), caplog.messages
    assert [s for s, _ in second.trained][0] == 5  # step 5 was lost with the crash: again
    before = [i for s, ids in first.trained if s <= 4 for i in ids]
    after = [i for _, ids in second.trained for i in ids]
    # Lightning fetched step 5's batch while step 4 trained: a position taken at the save
    # would skip it. Each record of the epoch once, in the unbroken order.
    assert second.trained[0][1] == first.trained[4][1]
    assert sorted(before + after) == every
    assert trainer.global_step == 10

    # The epoch's end was committed: the next epoch is the whole split again, from its start.
    third = Ids()
    fit(tmp_path, third, epochs=2)
    assert sorted(i for _, ids in third.trained for i in ids) == every
    assert third.trained[0][0] == 11


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    write_split(tmp_path / "data", "training", 1, 3)
    stream = vtrain.data.stream("training", uri=str(tmp_path / "data" / "*.jsonl"))
    with pytest.raises(UsageError, match=r"^batch_size: not a batch size .got 0"):
        StreamLoader(stream, batch_size=0)
    with pytest.raises(UsageError, match=r"^stream: not a Stream"):
        StreamLoader([1, 2], batch_size=1)
    with pytest.raises(UsageError, match=r"^every_n_train_steps: not a step count .got 0"):
        VtrainCheckpoint(None, every_n_train_steps=0)  # type: ignore[arg-type]
    loader = StreamLoader(stream, batch_size=2, collate_fn=lambda records: records[0])
    with pytest.raises(UsageError, match=r"^collate_fn: this rank's share ran out .*failed"):
        loader._empty()
    two = SimpleNamespace(train_dataloader=[loader, StreamLoader(stream, batch_size=1)])
    with pytest.raises(UsageError, match=r"^train_dataloaders: 2 StreamLoaders in one fit"):
        gather_position(two)


def test_ddp_killed_on_3_processes_resumes_on_2_and_trains_each_record_once(
    tmp_path: Path,
) -> None:
    # 6 files of 40: 240 records, 20 steps of 4 for each of 3 processes; commits every 3
    # steps; the chief dies after step 7, so the last commit is step 6 (or 3, were step 6's
    # background commit cut short), and what came after it comes again.
    every = write_split(tmp_path / "data", "training", 6, 40)
    results = tmp_path / "r"
    results.mkdir()
    env = {"RESULTS": str(results), "AIP_TRAINING_DATA_URI": str(tmp_path / "data" / "*.jsonl")}
    out = tmp_path / "out"
    first = local_run(
        out,
        ["--workers", "2", "--max-restarts", "0"],
        [SCRIPT, "--run", "1", "--die-after", "7"],
        **env,
    )
    assert first.returncode != 0, first.output  # killed mid-epoch
    second = local_run(out, ["--workers", "1"], [SCRIPT, "--run", "2"], **env)
    assert second.returncode == 0, second.output
    log = second.logs["chief-0"]
    assert " from 3 workers on 2; " in log, log[-3000:]
    done = int(log.split("vtrain: resumed step ")[1].split()[0])
    assert done in (3, 6)

    def steps(run: str, rank: int) -> list[dict[str, Any]]:
        lines = (results / f"ids-{run}-rank-{rank}.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    before = [s for r in range(3) for s in steps("1", r) if s["step"] <= done]
    assert {s["step"] for s in before} == set(range(1, done + 1))
    assert any(s["step"] == 7 for s in steps("1", 0))  # step 7 trained, then lost
    after = [s for r in range(2) for s in steps("2", r)]
    assert min(s["step"] for s in after) == done + 1
    # Both processes took as many steps (the shorter share with empty ones).
    assert [s["step"] for s in steps("2", 0)] == [s["step"] for s in steps("2", 1)]
    trained = [i for s in before + after for i in s["ids"]]
    assert sorted(trained) == every  # each record of the epoch exactly once
    assert not (results / "ids-2-rank-2.jsonl").exists()
