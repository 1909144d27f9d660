"""The data position in a Keras commit: taken after the step trained (not what tf.data read ahead),
resumed exactly, alone and by a MultiWorkerMirroredStrategy job stopped on 3 trainers and
resumed on 2; and Keras' resume reaching an old job's folder (VTRAIN_RESUME_FROM)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cluster_run import clean_env, local_run
from conftest import configure

from vtrain import CheckpointError, UsageError

JOB = str(Path(__file__).parent / "keras_stream_job.py")


def write_split(folder: Path, files: int, records: int) -> list[int]:
    """`files` JSON Lines files of `records` records each, with ids 0, 1, ...; the ids."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        ids = range(f * records, (f + 1) * records)
        (folder / f"training-{f}.jsonl").write_text(
            "".join(json.dumps({"id": i}) + "\n" for i in ids)
        )
    return list(range(files * records))


def steps(results: Path, run: str, rank: int) -> list[list[int]]:
    """The ids each step of `run` trained on `rank`, in order."""
    path = results / f"ids-{run}-rank-{rank}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def alone(
    tmp_path: Path, run: str, *args: str, out: str = "out", **extra: str
) -> subprocess.CompletedProcess[str]:
    """The job as one process, its output folder (`out`) and data under `tmp_path`."""
    env = clean_env(
        VTRAIN_OUTPUT_DIR=str(tmp_path / out),
        AIP_TRAINING_DATA_URI=str(tmp_path / "data" / "*.jsonl"),
        **extra,
    )
    return subprocess.run(
        [sys.executable, JOB, str(tmp_path / "r"), run, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_stopped_fit_resumes_after_the_last_step_it_committed_not_after_what_it_read(
    tmp_path: Path,
) -> None:
    # 60 records, 4 a step: the job exits after step 5; the last commit is step 4 (every 2),
    # while tf.data had read further ahead. Step 5's records must come again, and no others.
    every = write_split(tmp_path / "data", 3, 20)
    (tmp_path / "r").mkdir()
    first = alone(tmp_path, "1", "5")
    assert first.returncode == 3, first.stdout + first.stderr
    second = alone(tmp_path, "2")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "resumed step 4 from 1 workers on 1; 16 records read in epoch 0" in second.stderr
    before = steps(tmp_path / "r", "1", 0)
    assert len(before) == 5
    after = steps(tmp_path / "r", "2", 0)
    assert after[0] == before[4]  # trained after the commit: due again
    trained = [i for s in before[:4] + after for i in s]
    assert trained == every  # one process, no shuffling: the unbroken order, each once

    # A new job continuing this one from another folder reads its newest commit (step 14,
    # 56 records in), as --resume-from asks, though its own folder has none.
    old = tmp_path / "out" / "checkpoints"
    third = alone(tmp_path, "3", out="new", VTRAIN_RESUME_FROM=str(old))
    assert third.returncode == 0, third.stdout + third.stderr
    assert f"resumed from {old / 'keras' / 'step-000000000014'}" in third.stderr
    assert "resumed step 14 from 1 workers on 1; 56 records read" in third.stderr
    assert [i for s in steps(tmp_path / "r", "3", 0) for i in s] == every[56:]


@pytest.mark.faults
def test_a_job_stopped_on_3_trainers_resumes_on_2_and_trains_each_record_once(
    tmp_path: Path,
) -> None:
    # 6 files of 20: 120 records, 10 steps of 4 for each of 3 trainers; every trainer exits
    # after step 4, committed. The 72 records left are dealt to 2 trainers.
    every = write_split(tmp_path / "data", 6, 20)
    results = tmp_path / "r"
    results.mkdir()
    env = {"AIP_TRAINING_DATA_URI": str(tmp_path / "data" / "*.jsonl")}
    out = tmp_path / "out"
    first = local_run(
        out,
        ["--workers", "2", "--max-restarts", "0"],
        [JOB, str(results), "1", "4"],
        timeout=120,
        **env,
    )
    assert first.returncode != 0, first.output  # stopped mid-epoch
    second = local_run(out, ["--workers", "1"], [JOB, str(results), "2"], timeout=120, **env)
    assert second.returncode == 0, second.output
    said = second.logs["chief-0"]
    assert "resumed step 4 from 3 workers on 2; 48 records read in epoch 0" in said
    assert "a global batch is now 2 per-worker batches, not 3" in said

    before = [s for r in range(3) for s in steps(results, "1", r)]
    assert all(len(steps(results, "1", r)) == 4 for r in range(3))
    after = [s for r in range(2) for s in steps(results, "2", r)]
    trained = [i for s in before + after for i in s]
    assert sorted(trained) == every  # each record of the epoch exactly once
    assert not (results / "ids-2-rank-2.jsonl").exists()
    assert not list((out / "checkpoints" / "keras" / "data-positions").iterdir())  # swept


def test_what_model_checkpoint_and_batches_refuse(tmp_path: Path) -> None:
    write_split(tmp_path / "data", 1, 3)
    handle: Any = configure(
        VTRAIN_OUTPUT_DIR=str(tmp_path / "out"),
        AIP_TRAINING_DATA_URI=str(tmp_path / "data" / "*.jsonl"),
    )
    stream = handle.stream()
    with pytest.raises(UsageError, match=r"^model_checkpoint\(data=...\): cannot tell which"):
        handle.model_checkpoint(data=stream)
    with pytest.raises(UsageError, match=r"^stream: not a Stream"):
        handle.batches([1, 2], batch_size=2)
    with pytest.raises(UsageError, match=r"^batch_size: not a batch size"):
        handle.batches(stream, batch_size=0)
    batches = handle.batches(stream, batch_size=2)
    with pytest.raises(UsageError, match=r"^position\(batch\): no position was taken"):
        batches.position(0)  # nothing read yet
    assert [int(r["id"]) for r in batches.dataset.unbatch()] == [0, 1, 2]
    assert batches.position(0)["replica"]["read"] == 2
    assert batches.position(1) == batches.position() == stream.state()  # the partial last batch
    empty = handle.stream()
    list(empty)
    with pytest.raises(UsageError, match=r"^output_signature: cannot infer the records' types"):
        handle.batches(empty, batch_size=2)


def test_resume_from_an_empty_old_folder_is_refused(tmp_path: Path) -> None:
    handle: Any = configure(
        VTRAIN_OUTPUT_DIR=str(tmp_path / "out"), VTRAIN_RESUME_FROM=str(tmp_path / "typo")
    )
    with pytest.raises(CheckpointError, match=r"typo/keras: no committed step to continue from"):
        handle.resume(object())
