"""`stream()`: records() epoch after epoch, a JSON position, resume on every medium, next epoch."""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from data_files import replica_env, tfrecord_bytes, write_split

from vtrain import StorageError
from vtrain.data import Stream, merge_states, progress, records, stream
from vtrain.storage import open_location


def key(record: Any) -> str:
    return record.decode() if isinstance(record, bytes) else json.dumps(record, sort_keys=True)


def stop(streams: list[Stream], takes: list[int]) -> tuple[list[Any], dict[str, Any]]:
    """Take `takes[r]` records from replica r; return them and the global position, as JSON."""
    seen = [x for one, n in zip(streams, takes, strict=True) for x in islice(one, n)]
    return seen, json.loads(json.dumps(merge_states([one.state() for one in streams])))


@pytest.mark.parametrize("kind", ["jsonl", "csv", "tfrecord"])
@pytest.mark.parametrize("by_record", [False, True])
def test_a_stream_gives_what_records_gives(tmp_path: Path, kind: str, by_record: bool) -> None:
    write_split(tmp_path / "d", 5, per_file=4, kind=kind)
    opts: dict[str, Any] = {"uri": str(tmp_path / "d" / "*"), "environ": {}, "by_record": by_record}
    for rank in range(3):
        ours = list(stream(rank=rank, world_size=3, **opts))
        assert ours == list(records(rank=rank, world_size=3, **opts))


def test_the_next_epoch_deals_the_whole_split_again_to_the_new_readers(tmp_path: Path) -> None:
    every = write_split(tmp_path / "d", 6, per_file=5)
    opts: dict[str, Any] = {"uri": str(tmp_path / "d" / "*"), "environ": {}, "shuffle_seed": 3}
    seen, position = stop([stream(rank=r, world_size=3, **opts) for r in range(3)], [4, 2, 7])
    two = [stream(rank=r, world_size=2, resume=position, **opts) for r in range(2)]
    assert [s.epoch for s in two] == [0, 0] and two[0].resumed_from == 3
    rest = [x for s in two for x in s]
    assert sorted(map(key, seen + rest)) == sorted(map(key, every))

    assert [s.next_epoch() for s in two] == [1, 1]
    again = [list(s) for s in two]
    fresh = [stream(rank=r, world_size=2, **opts) for r in range(2)]
    for s in fresh:
        s.next_epoch()
    assert again == [list(s) for s in fresh]  # epoch 1 as a 2-reader run deals it
    assert sorted(map(key, again[0] + again[1])) == sorted(map(key, every))
    assert again[0] + again[1] != seen + rest  # another epoch, another order


def test_epochs_yields_each_epoch_and_moves_on_when_asked(tmp_path: Path) -> None:
    every = write_split(tmp_path / "d", 2, per_file=3)
    data = stream(uri=str(tmp_path / "d" / "*"), rank=0, world_size=1, environ={}, shuffle_seed=1)
    orders = []
    for epoch in data.epochs(3):
        assert data.epoch == epoch
        orders.append([key(x) for x in data])
    assert len(orders) == 3 and data.epoch == 3
    assert all(sorted(o) == sorted(map(key, every)) for o in orders)
    assert len({tuple(o) for o in orders}) > 1  # a seeded order per epoch


def test_a_position_whose_epoch_is_used_up_resumes_at_the_next(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 4, per_file=2)
    opts: dict[str, Any] = {"uri": str(tmp_path / "d" / "*"), "environ": {}}
    _, position = stop([stream(rank=r, world_size=2, **opts) for r in range(2)], [9, 9])
    told = progress(position)
    assert (told.epoch, told.read, told.left) == (0, 8, 0)  # every file read: counts known
    resumed = stream(rank=0, world_size=3, resume=position, **opts)
    assert resumed.epoch == 1
    assert list(resumed) == list(stream(rank=0, world_size=3, **opts))


def test_same_seed_same_order_and_a_stop_inside_a_shuffle_block(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 3, per_file=10)
    opts: dict[str, Any] = {
        "uri": str(tmp_path / "d" / "*"),
        "environ": {},
        "shuffle_seed": 11,
        "buffer": 7,
    }
    whole = list(stream(rank=0, world_size=1, **opts))
    assert whole == list(stream(rank=0, world_size=1, **opts))
    assert whole != list(stream(rank=0, world_size=1, **{**opts, "shuffle_seed": 12}))
    first, position = stop([stream(rank=0, world_size=1, **opts)], [10])  # 3 into block 2
    block = position["replicas"][0]["block"]
    assert (block["count"], block["start"]) == (7, 3)
    assert first + list(stream(rank=0, world_size=1, resume=position, **opts)) == whole


def test_the_state_is_small_json(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 40, per_file=50)
    data = stream(uri=str(tmp_path / "d" / "*"), rank=1, world_size=4, environ={})
    next(data)
    state = json.loads(json.dumps(data.state()))
    line = (tmp_path / "d" / "training-00001.jsonl").read_bytes().index(b"\n") + 1
    replica = state["replica"]
    assert replica["current"] == {"files": [1], "offset": line, "records": 1, "skip": 0, "step": 1}
    assert replica["work"] == [1, 5, 9, 13, 17, 21, 25, 29, 33, 37] and replica["done"] == 0
    assert len(json.dumps(state)) < 4000  # 40 files listed once, the rest a few numbers


def test_a_replica_that_reads_nothing_has_no_state(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 3)
    data = {"AIP_TRAINING_DATA_URI": str(tmp_path / "d" / "*")}
    idle = stream(environ=replica_env("ps", **data))
    assert list(idle) == [] and idle.state() is None and idle.rank is None
    places = (("chief", 0), ("worker", 0), ("worker", 1))
    readers = [stream(environ=replica_env(role, i, **data)) for role, i in places]
    position = merge_states([idle.state(), *(r.state() for r in readers)])
    assert progress(position).world_size == 3


def test_resume_on_every_medium(medium) -> None:  # type: ignore[no-untyped-def]
    location = open_location(medium.uri, **medium.options)
    rows = [{"i": i, "pad": "x" * 40} for i in range(30)]
    for f in range(3):
        text = "".join(json.dumps(r) + "\n" for r in rows[f * 10 : f * 10 + 10])
        location.write_bytes(f"part-{f}.jsonl", text.encode())
    location.write_bytes("c.csv", b"i,pad\n" + b"".join(b"%d,y\n" % i for i in range(30, 40)))
    location.write_bytes("t.tfrecord", tfrecord_bytes([b"%d" % i for i in range(40, 50)]))
    opts = {"environ": medium.options["environ"], "gcs_mount": medium.options.get("gcs_mount")}

    def ids(xs: list[Any]) -> list[int]:
        return [int(x) if isinstance(x, bytes) else int(x["i"]) for x in xs]

    for pattern, expected in (
        ("*.jsonl", range(30)),
        ("*.csv", range(30, 40)),
        ("*.tfrecord", range(40, 50)),
    ):
        uri = medium.sub(pattern)
        by_record = pattern != "*.jsonl"
        n = 3 if by_record else 2
        first = [
            stream(uri=uri, rank=r, world_size=n, by_record=by_record, **opts) for r in range(n)
        ]
        seen, position = stop(first, [4, 3, 2][:n])
        second = [
            stream(uri=uri, rank=r, world_size=4, by_record=True, resume=position, **opts)
            for r in range(4)
        ]
        assert any(r["current"] and r["current"]["offset"] for r in position["replicas"])
        rest = [x for s in second for x in s]
        assert sorted(ids(seen + rest)) == list(expected)


def test_a_file_that_changes_between_epochs_is_named(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 2, per_file=3)
    data = stream(uri=str(tmp_path / "d" / "*"), rank=0, world_size=1, environ={})
    assert len(list(data)) == 6
    with open(tmp_path / "d" / "training-00001.jsonl", "a") as f:
        f.write('{"file": "1", "row": "3"}\n')
    data.next_epoch()
    with pytest.raises(
        StorageError,
        match=r"training-00001.jsonl: holds 4 records now, 3 when read before. "
        r"Hint: a split must not change while a job reads it",
    ):
        list(data)
