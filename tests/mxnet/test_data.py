"""handle.data_iter / handle.share: each worker's own records of the split, as mx.io batches."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cluster_run import local_run

import vtrain
from vtrain import UsageError

READ_SHARE = str(Path(__file__).parent / "scripts" / "read_share.py")


def write_split(folder: Path, files: int, per_file: int) -> list[int]:
    """JSON Lines files of records {"id", "x", "y"}; return every id."""
    folder.mkdir(parents=True)
    ids = []
    for f in range(files):
        rows = [f * 100 + r for r in range(per_file)]
        lines = [json.dumps({"id": i, "x": i % 7, "y": 2.0 * (i % 7)}) for i in rows]
        (folder / f"training-{f:03d}.jsonl").write_text("\n".join(lines) + "\n")
        ids += rows
    return ids


def test_each_worker_reads_its_own_share_every_epoch(tmp_path: Path) -> None:
    # Equal shares: under dist_sync every worker must take as many steps as the others.
    ids = write_split(tmp_path / "data", files=4, per_file=7)
    run = local_run(
        tmp_path / "out",
        ["--workers", "2", "--ps", "1"],
        [READ_SHARE],
        AIP_TRAINING_DATA_URI=str(tmp_path / "data" / "training-*.jsonl"),
    )
    assert run.returncode == 0, run.output
    per_epoch: dict[str, list[int]] = {"0": [], "1": []}
    ranks = set()
    for worker in ("worker-0", "worker-1"):
        for epoch, rank, seen in re.findall(r"^EPOCH (\d) rank (\d) (.*)$", run.logs[worker], re.M):
            per_epoch[epoch] += json.loads(seen)
            ranks.add(rank)
    assert ranks == {"0", "1"}
    # Every record once per epoch: the workers' shares are disjoint and cover the split.
    assert sorted(per_epoch["0"]) == sorted(per_epoch["1"]) == ids
    assert "EPOCH" not in run.logs["chief-0"] + run.logs["ps-0"]


@pytest.fixture
def alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> vtrain.plugins.Handle:
    for name in ("CLUSTER_SPEC", "TF_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AIP_TRAINING_DATA_URI", str(tmp_path / "data" / "*.jsonl"))
    return vtrain.plugins.get("mxnet").configure()


def test_batches_pad_or_discard_the_last_and_start_over(alone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ids = write_split(tmp_path / "data", files=2, per_file=5)  # 10 records
    padded = alone.data_iter(data=["id", "x"], label="y", batch_size=4)
    batches = list(padded)
    assert [b.pad for b in batches] == [0, 0, 2]
    assert [int(i) for b in batches for i in b.data[0].asnumpy()[: 4 - b.pad, 0]] == ids
    assert batches[0].label[0].asnumpy().tolist() == [2.0 * (i % 7) for i in ids[:4]]
    assert batches[-1].data[0].shape == (4, 2)
    padded.reset()
    assert len(list(padded)) == 3
    discarded = alone.data_iter(data=["x"], label=None, batch_size=4, last_batch="discard")
    batches = list(discarded)
    assert len(batches) == 2 and batches[0].label == []
    assert discarded.provide_data[0].shape == (4, 1)


def test_a_value_that_is_no_number_is_named(alone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.jsonl").write_text('{"x": 1, "y": 2}\n{"x": "seven", "y": 1}\n')
    with pytest.raises(UsageError, match=r"record 1 of this worker's share, column 'x'.*'seven'"):
        list(alone.data_iter(data=["x"], label="y", batch_size=2))
    (tmp_path / "data" / "a.jsonl").write_text('{"x": 1}\n{"x": null, "y": ""}\n')
    [batch] = list(alone.data_iter(data=["x"], label="y", batch_size=2))
    assert [str(v) for v in batch.data[0].asnumpy()[:, 0]] == ["1.0", "nan"]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"data": "x", "label": "y", "batch_size": 2}, r"data: not a list of column names"),
        ({"data": [], "label": "y", "batch_size": 2}, r"data: not a list of column names"),
        ({"data": ["x"], "label": 3, "batch_size": 2}, r"label: not a column name"),
        ({"data": ["x"], "label": "y", "batch_size": 0}, r"batch_size: not a batch size"),
        ({"data": ["x"], "label": "y", "batch_size": True}, r"batch_size: not a batch size"),
        ({"data": ["x"], "label": "y", "batch_size": 2, "last_batch": "roll"}, r"last_batch"),
        ({"data": ["x"], "label": "y", "batch_size": 2, "format": "xml"}, r"format: unknown"),
    ],
)
def test_bad_arguments_are_named(alone, options: dict[str, object], match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match=match):
        alone.data_iter(**options)
