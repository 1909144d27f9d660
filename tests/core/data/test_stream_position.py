"""Damaged or foreign positions are refused, never dealt out again; merge_states' errors."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from data_files import write_split

from vtrain import ConfigError, UsageError
from vtrain.data import merge_states, stream
from vtrain.storage import open_location


def take(uri: str, takes: list[int], **options: Any) -> dict[str, Any]:
    """The global position, as JSON, after replica r of len(takes) took takes[r] records."""
    streams = [
        stream(uri=uri, rank=r, world_size=len(takes), environ={}, **options)
        for r in range(len(takes))
    ]
    for one, n in zip(streams, takes, strict=True):
        list(islice(one, n))
    return json.loads(json.dumps(merge_states([s.state() for s in streams])))


@pytest.fixture
def split(tmp_path: Path) -> str:
    write_split(tmp_path / "d", 4, per_file=6)
    return str(tmp_path / "d" / "*.jsonl")


def edited(change: Callable[[dict[str, Any]], object]) -> Callable[[dict[str, Any]], Any]:
    def apply(position: dict[str, Any]) -> Any:
        position = copy.deepcopy(position)
        out = change(position)
        return position if out is None else out

    return apply


DAMAGED = [
    (edited(lambda p: p.__delitem__("kind")), r"resume: not a data position"),
    (edited(lambda p: p.update(version=2)), r"resume: version: a data position of another version"),
    (edited(lambda p: p["replicas"][0]), r"resume: not a data position"),
    (
        edited(
            lambda p: p["replicas"][1].update(
                current={"files": [1], "offset": 10**9, "records": 3, "skip": 0, "step": 1}
            )
        ),
        r"resume: replicas\[1\]\.current\.offset: a damaged position \(got 1000000000\); "
        r"expected 0 to \d+, the size of the file it is in",
    ),
    (
        edited(lambda p: p["replicas"][0]["work"].__setitem__(0, 9)),
        r"replicas\[0\]\.work\[0\]: a damaged position \(got 9\); expected a file's index, 0 to 3",
    ),
    (
        edited(lambda p: p["replicas"][0].update(done=True)),
        r"replicas\[0\]\.done: a damaged position \(got True\); expected an int of 0 or more",
    ),
    (
        edited(lambda p: p["replicas"][0].update(current=None)),
        r"replicas\[0\]\.current: a damaged position .*expected an item while work is left",
    ),
    (
        edited(lambda p: p["replicas"].__delitem__(-1)),
        r"resume: replicas: a damaged position .*expected a list of 2 replicas",
    ),
    (
        edited(lambda p: p.update(counts=[1])),
        r"resume: counts: a damaged position \(got \[1\]\); expected \{file index: records\}",
    ),
    (
        edited(lambda p: p.update(counts={"9": 1})),
        r"resume: counts: a damaged position \(got '9'\); expected a file's index, 0 to 3",
    ),
    (edited(lambda p: p.update(epoch=-1)), r"resume: epoch: a damaged position \(got -1\)"),
    (
        edited(
            lambda p: p["replicas"][0].update(
                block={"lanes": [], "count": 1, "order": None, "start": 0, "step": 1}
            )
        ),
        r"replicas\[0\]\.block\.lanes: a damaged position",
    ),
    (
        edited(lambda p: p["source"].update(files="all")),
        r"resume: source\.files: not a list of files \(got 'all'\)",
    ),
]


@pytest.mark.parametrize(("damage", "match"), DAMAGED)
def test_a_damaged_position_is_refused(
    split: str, damage: Callable[[dict[str, Any]], Any], match: str
) -> None:
    position = take(split, [3, 2])
    with pytest.raises(ConfigError, match=match):
        stream(uri=split, rank=0, world_size=3, environ={}, resume=damage(position))


def test_a_replica_state_is_not_a_position(split: str) -> None:
    one = stream(uri=split, rank=0, world_size=1, environ={})
    next(one)
    with pytest.raises(ConfigError, match=r"resume: a replica's state, not a global position"):
        stream(uri=split, rank=0, world_size=1, environ={}, resume=one.state())
    with pytest.raises(UsageError, match=r"resume: not a position \(got 'p'\)"):
        stream(uri=split, rank=0, world_size=1, environ={}, resume="p")  # type: ignore[arg-type]


def test_a_position_of_another_split_is_refused(tmp_path: Path, split: str) -> None:
    position = take(split, [2])
    env = {"AIP_VALIDATION_DATA_URI": split}
    with pytest.raises(
        ConfigError,
        match=r"resume: split: a position of another split \(got 'training'\); "
        r"expected 'validation'",
    ):
        stream("validation", rank=0, world_size=1, environ=env, resume=position)


def test_a_position_of_another_format_is_refused(split: str) -> None:
    position = take(split, [2])
    with pytest.raises(
        ConfigError,
        match=r"resume: source.format: a position taken on records of another format "
        r"\(got 'jsonl'\); expected csv",
    ):
        stream(uri=split, rank=0, world_size=1, format="csv", environ={}, resume=position)


def test_other_shuffling_is_refused(split: str) -> None:
    position = take(split, [2], shuffle_seed=4)
    with pytest.raises(
        ConfigError,
        match=r"resume: shuffle: taken with other shuffling \(got \{'seed': 4, 'buffer': 1024\}\)",
    ):
        stream(uri=split, rank=0, world_size=1, environ={}, resume=position, shuffle_seed=5)


def test_a_file_that_grew_is_refused(tmp_path: Path, split: str) -> None:
    position = take(split, [2, 2])
    with open(tmp_path / "d" / "training-00002.jsonl", "a") as f:
        f.write('{"file": "2", "row": "6"}\n')
    with pytest.raises(
        ConfigError,
        match=r"training-00002.jsonl: changed since the position was taken: its size differs "
        r"\(got '\d+ now'\); expected \d+, as the position recorded",
    ):
        stream(uri=split, rank=0, world_size=2, environ={}, resume=position)


def test_a_file_rewritten_in_place_is_refused(tmp_path: Path, split: str) -> None:
    position = take(split, [1])
    path = tmp_path / "d" / "training-00003.jsonl"
    os.utime(path, ns=(0, os.stat(path).st_mtime_ns + 10**9))  # the same bytes, written again
    with pytest.raises(ConfigError, match=r"training-00003.jsonl: .*its generation differs"):
        stream(uri=split, rank=0, world_size=1, environ={}, resume=position)


def test_a_file_added_or_gone_is_refused(tmp_path: Path, split: str) -> None:
    position = take(split, [1, 1])
    (tmp_path / "d" / "training-00009.jsonl").write_text('{"a": 1}\n')
    with pytest.raises(
        ConfigError,
        match=r"resume: source.files: the split's files are not those the position was taken on "
        r"\(got '4 then, 5 now'\).*Hint: new: training-00009.jsonl; ",
    ):
        stream(uri=split, rank=0, world_size=2, environ={}, resume=position)
    (tmp_path / "d" / "training-00009.jsonl").unlink()
    (tmp_path / "d" / "training-00000.jsonl").unlink()
    with pytest.raises(ConfigError, match=r"Hint: gone: training-00000.jsonl; "):
        stream(uri=split, rank=0, world_size=1, environ={}, resume=position)


def test_a_rewritten_object_is_refused_on_gcs(gcs_emulator: Any) -> None:
    bucket = gcs_emulator.new_bucket()
    location = open_location(f"gs://{bucket}/d", environ=gcs_emulator.environ)
    for f in range(3):
        location.write_bytes(f"p{f}.jsonl", b"".join(b'{"i": %d}\n' % i for i in range(5)))
    opts = {"uri": f"gs://{bucket}/d/*.jsonl", "environ": gcs_emulator.environ}
    first = [stream(rank=r, world_size=3, **opts) for r in range(3)]
    seen = [x for one in first for x in islice(one, 2)]
    position = merge_states([s.state() for s in first])
    rest = [x for r in range(2) for x in stream(rank=r, world_size=2, resume=position, **opts)]
    assert len(seen) + len(rest) == 15
    location.write_bytes("p1.jsonl", location.read_bytes("p1.jsonl"))  # a new generation
    with pytest.raises(ConfigError, match=rf"gs://{bucket}/d/p1.jsonl: .*generation differs"):
        stream(rank=0, world_size=2, resume=position, **opts)


def states(split: str, n: int, **options: Any) -> list[dict[str, Any]]:
    streams = [stream(uri=split, rank=r, world_size=n, environ={}, **options) for r in range(n)]
    for one in streams:
        next(one)
    return [s.state() for s in streams]  # type: ignore[misc]


MERGE_ERRORS: list[tuple[Callable[[list[dict[str, Any]]], Any], type[Exception], str]] = [
    (lambda s: [], UsageError, r"states: no states to merge"),
    (lambda s: s[:2], UsageError, r"states: the states of rank 2 are missing \(got '2 of 3'\)"),
    (
        lambda s: [s[0], s[0], s[2]],
        UsageError,
        r"states\[1\]\.rank: a rank out of range, or given twice \(got 0\)",
    ),
    (
        lambda s: [s[0], {**s[1], "epoch": 1}, s[2]],
        UsageError,
        r"states\[1\]\.epoch: the replicas' states differ in 'epoch' \(got 1\); expected 0",
    ),
    (lambda s: [s[0], {"a": 1}], ConfigError, r"states\[1\]: not a data position"),
    (
        lambda s: [merge_states(s)],
        UsageError,
        r"states\[0\]: not a replica's state: no rank, replica; .*merged already",
    ),
    (
        lambda s: [{**s[0], "counts": {"0": 7}}, {**s[1], "counts": {"0": 8}}, s[2]],
        UsageError,
        r"states\[1\]\.counts: the replicas read different record counts of file 0: 7 in "
        r"states\[0\], 8 here",
    ),
]


@pytest.mark.parametrize(("pick", "error", "match"), MERGE_ERRORS)
def test_merge_states_refuses(
    split: str, pick: Callable[[list[dict[str, Any]]], Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        merge_states(pick(states(split, 3)))
