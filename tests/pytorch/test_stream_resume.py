"""The data position in a TrainingState commit: saved with the model, resumed exactly, refused
when it no longer fits the data; and a real DDP job killed on 3 processes, resumed on 2."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import torch
from cluster_run import local_run
from logged import warned
from torch.utils.data import DataLoader

import vtrain
from vtrain import CheckpointError, ConfigError, UsageError
from vtrain.data.saved_position import POSITION_FILE
from vtrain.data.saved_position import read_position as read
from vtrain_pytorch.data import StreamDataset

SCRIPT = str(Path(__file__).parent / "scripts" / "stream_resume.py")


def write_split(folder: Path, name: str, files: int, records: int) -> list[int]:
    """`files` JSON Lines files of `records` records each, with ids 0, 1, ...; the ids."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        ids = range(f * records, (f + 1) * records)
        (folder / f"{name}-{f}.jsonl").write_text(
            "".join(json.dumps({"id": i}) + "\n" for i in ids)
        )
    return list(range(files * records))


def alone(tmp_path: Path) -> Any:
    """A one-process handle whose checkpoints and training split are under `tmp_path`."""
    env = {
        "AIP_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
        "AIP_TRAINING_DATA_URI": str(tmp_path / "data" / "*.jsonl"),
    }
    return vtrain.plugins.get("pytorch").configure(environ=env)


def ids(batch: list[dict[str, int]]) -> list[int]:
    return [r["id"] for r in batch]


def test_a_commit_holds_the_position_and_a_resume_reads_only_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    every = write_split(tmp_path / "data", "training", 3, 10)
    handle = alone(tmp_path)
    model = torch.nn.Linear(1, 1)
    handle.save_checkpoint(1, model, blocking=True)  # an old commit: no position
    found = handle.resume(model)
    first = handle.stream(resume=found, shuffle_seed=2, buffer=4)
    assert "vtrain: the commit of step 1 holds no data position; the data restarts its epoch" in (
        caplog.messages
    )
    batches = iter(DataLoader(StreamDataset(first), batch_size=4, collate_fn=list))
    seen = ids(next(batches)) + ids(next(batches))
    handle.save_checkpoint(3, model, data=first, blocking=True)
    seen += ids(next(batches))  # read after the commit: due again after the resume

    found = handle.resume(model)
    assert found.done == 3 and found.data is not None
    rest = [r["id"] for r in handle.stream(resume=found, shuffle_seed=2, buffer=4)]
    assert sorted(seen[:8] + rest) == every
    assert rest[:4] == seen[8:]  # the same world size goes on in the unbroken order
    line = "vtrain: resumed step 3 from 1 workers on 1; "
    assert any(m.startswith(line) for m in caplog.messages), caplog.messages
    handle.close()


def test_a_position_that_no_longer_fits_is_refused(tmp_path: Path, caplog) -> None:
    write_split(tmp_path / "data", "training", 2, 5)
    handle = alone(tmp_path)
    model = torch.nn.Linear(1, 1)
    data = handle.stream(shuffle_seed=1)
    next(data)
    handle.save_checkpoint(1, model, data=data, blocking=True)
    found = handle.resume(model)

    with pytest.raises(ConfigError, match=r"shuffle.*taken with other shuffling"):
        handle.stream(resume=found, shuffle_seed=2)
    with pytest.raises(
        ConfigError, match=r"^resume: split: a position of another split .got .training"
    ):
        handle.stream("validation", resume=found, shuffle_seed=1, uri=str(tmp_path / "data" / "*"))
    with (tmp_path / "data" / "training-1.jsonl").open("a") as f:
        f.write(json.dumps({"id": 99}) + "\n")  # the split changed since the commit
    with pytest.raises(ConfigError, match=r"training-1.jsonl"):
        handle.stream(resume=found, shuffle_seed=1)

    # A torn position fails the step's manifest check, as any damaged file of the step.
    next(Path(found.uri).glob(f"data-*/{POSITION_FILE}")).write_text("{torn")
    with (
        warned(caplog, rf"{POSITION_FILE}' does not match the manifest"),
        pytest.raises(CheckpointError, match=r"no committed step passes its manifest check"),
    ):
        handle.resume(model)
    # One that passes it but is no position (a writer's bug) is refused when read.
    for text, problem in (("{torn", "is not JSON"), ("[1]", "holds no position")):
        (tmp_path / POSITION_FILE).write_text(text)
        with pytest.raises(CheckpointError, match=rf"^step-9: {POSITION_FILE} {problem}"):
            read(str(tmp_path), "step-9")
    with pytest.raises(UsageError, match=r"^data: has no position"):
        handle.save_checkpoint(2, model, data=[1, 2])
    with pytest.raises(UsageError, match=r"^stream: not a Stream"):
        StreamDataset([1, 2])  # type: ignore[arg-type]
    handle.close()


def test_a_loader_worker_cannot_read_a_stream(tmp_path: Path) -> None:
    write_split(tmp_path / "data", "training", 1, 3)
    data = alone(tmp_path).stream()
    loader = DataLoader(StreamDataset(data), num_workers=1, multiprocessing_context="fork")
    with pytest.raises(UsageError, match=r"read in DataLoader worker 0 of 1.*num_workers=0"):
        list(loader)


def test_ddp_killed_on_3_processes_resumes_on_2_and_trains_each_record_once(
    tmp_path: Path,
) -> None:
    # 6 files of 50: 100 records, 25 steps of 4 for each of 3 processes; the chief dies
    # after step 10, so the last commit is step 9, and step 10's records come again.
    every = write_split(tmp_path / "data", "training", 6, 50)
    results = tmp_path / "r"
    results.mkdir()
    env = {"RESULTS": str(results), "AIP_TRAINING_DATA_URI": str(tmp_path / "data" / "*.jsonl")}
    out = tmp_path / "out"
    first = local_run(
        out,
        ["--workers", "2", "--max-restarts", "0"],
        [SCRIPT, "--run", "1", "--die-after", "10"],
        **env,
    )
    assert first.returncode != 0, first.output  # killed mid-epoch
    second = local_run(out, ["--workers", "1"], [SCRIPT, "--run", "2"], **env)
    assert second.returncode == 0, second.output
    assert "resumed step 9 from 3 workers on 2; " in second.logs["chief-0"]
    assert "a global batch is now 2 per-worker batches, not 3" in second.logs["chief-0"]

    def steps(run: str, rank: int) -> list[dict[str, Any]]:
        lines = (results / f"ids-{run}-rank-{rank}.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    before = [s for r in range(3) for s in steps("1", r) if s["step"] <= 9]
    assert {s["step"] for s in before} == set(range(1, 10))
    assert any(s["step"] == 10 for s in steps("1", 0))  # step 10 was read, then lost
    after = [s for r in range(2) for s in steps("2", r)]
    assert min(s["step"] for s in after) == 10
    trained = [i for s in before + after for i in s["ids"]]
    assert sorted(trained) == every  # each record of the epoch exactly once
    assert not os.path.exists(results / "ids-2-rank-2.jsonl")
