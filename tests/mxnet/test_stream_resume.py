"""The data position in an MXNet commit: each worker writes its part, the leader commits them
merged with the parameters; a dist_sync job with a parameter server killed mid-epoch on 3
workers resumes on 2, which read what is left unevenly yet step together, and every record
of the epoch is trained exactly once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mxnet as mx
import pytest
from cluster_run import local_run
from mxnet import gluon

import vtrain
from vtrain import CheckpointError, UsageError
from vtrain.data.saved_position import POSITION_FILE, read_position
from vtrain_mxnet.data import (
    MORE_KEY,
    RecordIter,
    check_count,
    epochs_of,
    workers_with_records,
)

SCRIPT = str(Path(__file__).parent / "scripts" / "stream_resume.py")


def write_split(folder: Path, files: int, records: int) -> list[int]:
    """`files` JSON Lines files of `records` records, with ids 0, 1, …; the ids."""
    folder.mkdir(parents=True)
    for f in range(files):
        ids = range(f * records, (f + 1) * records)
        (folder / f"training-{f}.jsonl").write_text(
            "".join(json.dumps({"id": i, "x": i % 5}) + "\n" for i in ids)
        )
    return list(range(files * records))


def alone(tmp_path: Path) -> Any:
    env = {
        "AIP_CHECKPOINT_DIR": str(tmp_path / "ckpt"),
        "AIP_TRAINING_DATA_URI": str(tmp_path / "data" / "*.jsonl"),
    }
    return vtrain.plugins.get("mxnet").configure(environ=env)


def test_a_commit_holds_the_position_and_a_resume_reads_only_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    every = write_split(tmp_path / "data", 3, 6)
    handle = alone(tmp_path)
    net = gluon.nn.Dense(1, in_units=1)
    net.initialize(mx.init.Zero())
    handle.save_checkpoint(1, net, blocking=True)  # an old commit: no position
    found = handle.resume(net)
    assert found.data is None
    data = handle.stream(resume=found, shuffle_seed=3, buffer=4)
    assert "the commit of step 1 holds no data position" in caplog.text
    batches = handle.batches(data, data=["x"], label="id", batch_size=4)
    seen = [int(i) for _ in range(2) for i in next(batches).label[0].asnumpy()]
    stale = tmp_path / "ckpt" / "data-positions" / "step-7"
    stale.mkdir(parents=True)
    (stale / "rank-1.json").write_text("{}")  # a part a killed job of 2 workers left
    handle.save_checkpoint(2, net, blocking=True, data=data)
    assert list(tmp_path.glob("ckpt/data-positions/*")) == []  # one worker writes none

    found = handle.resume(net)
    assert found.done == 2 and found.data is not None
    rest = handle.batches(
        handle.stream(resume=found, shuffle_seed=3, buffer=4), data=["x"], label="id", batch_size=4
    )
    rest.reset()  # before the first batch: the resumed epoch keeps its place
    after = [int(i) for b in rest for i in b.label[0].asnumpy()[: 4 - b.pad]]
    assert sorted(seen + after) == every
    assert "vtrain: resumed step 2 from 1 workers on 1; 8 records read in epoch 0" in caplog.text
    rest.reset()  # the next epoch: the whole split again
    assert sorted(int(i) for b in rest for i in b.label[0].asnumpy()[: 4 - b.pad]) == every

    with pytest.raises(UsageError, match=r"^data: has no position"):
        handle.save_checkpoint(3, net, data=[1, 2])
    for text, problem in (("{torn", "is not JSON"), ("[1]", "holds no position")):
        (tmp_path / POSITION_FILE).write_text(text)
        with pytest.raises(CheckpointError, match=rf"^step-9: {POSITION_FILE} {problem}"):
            read_position(str(tmp_path), "step-9")
    handle.close()


def batches_of(ids: list[int], left: list[int], last_batch: str = "pad") -> RecordIter:
    """A RecordIter of batches of 2 over `ids`; before each, the other workers' count of
    those with records is popped from `left` (this worker adds itself when it has some)."""
    records = [{"id": i, "x": 0} for i in ids]
    return RecordIter(
        lambda: iter(records),
        data=["x"],
        label="id",
        batch_size=2,
        last_batch=last_batch,
        workers_left=lambda have: left.pop(0) + have,
    )


def test_a_worker_out_of_records_pads_while_another_reads_on() -> None:
    # 3 records, then 2 batches of padding alone while another worker reads on.
    batches = list(batches_of([7, 8, 9], [1, 1, 1, 1, 0]))
    assert [b.pad for b in batches] == [0, 1, 2, 2]
    assert [b.label[0].asnumpy().tolist() for b in batches][1:] == [[9, 0], [0, 0], [0, 0]]
    assert batches[3].data[0].shape == (2, 1)
    # The epoch ends when no worker has a batch: a short one discarded counts as none.
    assert [b.pad for b in batches_of([1, 2, 3], [0, 0], "discard")] == [0]
    # Alone in the job, a RecordIter asks nobody: its own records decide.
    assert [
        b.pad for b in RecordIter(lambda: iter([{"x": 1}]), data=["x"], label=None, batch_size=2)
    ] == [1]


class Epochs:
    """A stream whose epoch 0 holds nothing for this worker (a resume dealt it none)."""

    def __init__(self) -> None:
        self.epoch = 0

    def __iter__(self) -> Any:
        return iter([] if self.epoch == 0 else [{"x": self.epoch}])

    def next_epoch(self) -> None:
        self.epoch += 1


def test_a_share_found_empty_moves_on_at_the_reset_as_the_others_do() -> None:
    stream = Epochs()
    opened = epochs_of(stream)
    opened(), opened()  # resets before the first batch keep the resumed epoch's place
    assert stream.epoch == 0
    assert list(opened()) == []  # read, and found empty: the next reset moves on
    assert list(opened()) == [{"x": 1}] and stream.epoch == 1


def test_the_workers_sum_their_flags_once_keyed_and_a_server_optimizer_is_refused() -> None:
    kvstore = mx.kv.create("local")  # push then pull: what one worker pushed
    assert workers_with_records(kvstore, True, 1) == 1
    assert workers_with_records(kvstore, False, 1) == 0  # the key initialised once
    with_optimizer = mx.kv.create("local")
    with_optimizer.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
    with pytest.raises(
        UsageError,
        match=rf"^kvstore key {MORE_KEY}: the kvstore's servers "
        r"changed the sum .* \(got -0\.1.*update_on_kvstore=True",
    ):
        workers_with_records(with_optimizer, True, 1)
    with pytest.raises(
        UsageError,
        match=r"changed the sum .* \(got 3\.0\); expected a whole "
        r"count from 1 to 2",
    ):
        check_count(3.0, True, 2)


def test_dist_sync_killed_on_3_workers_resumes_on_2_and_trains_each_record_once(
    tmp_path: Path,
) -> None:
    # 6 files of 20: 120 records, 10 steps of 4 for each of 3 workers; worker 0 dies reading
    # step 4, so the last commit is step 3, and step 4's records come again. The 84 left are
    # dealt to 2 workers unevenly: the one out of records first steps on with padding alone.
    every = write_split(tmp_path / "data", 6, 20)
    results = tmp_path / "r"
    results.mkdir()
    env = {"AIP_TRAINING_DATA_URI": str(tmp_path / "data" / "*.jsonl")}
    out = tmp_path / "out"
    first = local_run(
        out,
        ["--workers", "3", "--ps", "1", "--max-restarts", "0"],
        [SCRIPT, str(results), "1", "3"],
        timeout=120,
        **env,
    )
    assert first.returncode != 0, first.output  # killed mid-epoch
    second = local_run(
        out, ["--workers", "2", "--ps", "1"], [SCRIPT, str(results), "2"], timeout=120, **env
    )
    assert second.returncode == 0, second.output
    said = "".join(second.logs.values())  # the leader's: a worker, the chief schedules
    assert "resumed step 3 from 3 workers on 2; 36 records read in epoch 0" in said
    assert "a global batch is now 2 per-worker batches, not 3" in said

    def steps(run: str, rank: int) -> list[dict[str, Any]]:
        lines = (results / f"ids-{run}-rank-{rank}.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    before = [s for r in range(3) for s in steps("1", r) if s["step"] <= 3]
    assert sorted(s["step"] for s in before) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    after = [steps("2", r) for r in range(2)]
    # The same steps on both workers (dist_sync hangs otherwise), the last all padding on one.
    assert [s["step"] for s in after[0]] == [s["step"] for s in after[1]]
    assert after[0][0]["step"] == 4
    assert [] in [s["ids"] for run in after for s in run]
    params = [json.loads((results / f"params-2-rank-{r}.json").read_text()) for r in range(2)]
    assert params[0] == params[1] != [[0.0], [0.0]]  # stepped together, and trained
    trained = [i for s in before + after[0] + after[1] for i in s["ids"]]
    assert sorted(trained) == every  # each record of the epoch exactly once
    assert list(out.glob("checkpoints/data-positions/*")) == []  # the leader took the parts
