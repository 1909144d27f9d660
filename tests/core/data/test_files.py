"""`files()`: a replica's share of real files, from the cluster or from explicit arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from data_files import replica_env, write_split
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain import ConfigError, UsageError
from vtrain.data import files
from vtrain.data.files import ordinal
from vtrain.storage import open_location


def test_the_trainers_share_every_file_once(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 7)
    uri = str(tmp_path / "d" / "training-*")
    shares = [
        files(environ=replica_env(role, index, AIP_TRAINING_DATA_URI=uri))
        for role, index in (("chief", 0), ("worker", 0), ("worker", 1))
    ]
    assert [s.rank for s in shares] == [0, 1, 2] and {s.world_size for s in shares} == {3}
    dealt = [f for s in shares for f in s]
    assert sorted(dealt) == sorted(str(p) for p in (tmp_path / "d").iterdir())
    assert len(set(dealt)) == 7 and [len(s) for s in shares] == [3, 2, 2]
    assert all(s.total_files == 7 for s in shares)


def test_services_get_an_empty_share_without_listing() -> None:
    # A ps never lists the bucket, even when the pattern is bad or unset.
    share = files(environ=replica_env("ps", AIP_TRAINING_DATA_URI="/nowhere/*"))
    assert share.files == () and share.rank is None and share.total_files is None


def test_an_evaluator_reads_the_validation_split_whole(tmp_path: Path) -> None:
    write_split(tmp_path / "v", 4)
    env = replica_env("evaluator", AIP_VALIDATION_DATA_URI=str(tmp_path / "v" / "*"))
    assert len(files("validation", environ=env)) == 4
    assert files("training", environ=env).files == ()


def test_fewer_files_than_trainers_says_so_and_offers_record_sharding(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 2)
    env = replica_env("worker", 1, AIP_TRAINING_DATA_URI=str(tmp_path / "d" / "*"))
    with pytest.raises(
        ConfigError,
        match=r"AIP_TRAINING_DATA_URI: 2 file\(s\) for 3 readers: "
        r"some would read nothing .*Hint: pass by_record=True",
    ):
        files(environ=env)
    share = files(environ=env, by_record=True)
    assert len(share) == 2 and share.record_shard == (2, 3) and share.by_record


def test_the_hint_counts_readers_as_an_ordinal(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 1)
    with pytest.raises(ConfigError, match=r"keeps every 3rd record$"):
        files(uri=str(tmp_path / "d" / "*"), rank=0, world_size=3, environ={})


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (1, "1st"),
        (2, "2nd"),
        (3, "3rd"),
        (4, "4th"),
        (10, "10th"),
        (11, "11th"),
        (12, "12th"),
        (13, "13th"),
        (14, "14th"),
        (21, "21st"),
        (22, "22nd"),
        (23, "23rd"),
        (100, "100th"),
        (101, "101st"),
        (102, "102nd"),
        (111, "111th"),
        (112, "112th"),
        (113, "113th"),
        (1001, "1001st"),
        (1011, "1011th"),
        (0, "0th"),
    ],
)
def test_ordinals(number: int, expected: str) -> None:
    assert ordinal(number) == expected


@examples(300)
@given(st.integers(0, 10**6))
def test_an_ordinal_ends_as_english_says_it(number: int) -> None:
    # "eleventh", "twelfth", "thirteenth"; otherwise the last digit: first, second, third.
    tens, units = number // 10 % 10, number % 10
    suffix = "th" if tens == 1 or units > 3 or units == 0 else ("st", "nd", "rd")[units - 1]
    assert ordinal(number) == f"{number}{suffix}"


def test_explicit_rank_and_uri(tmp_path: Path) -> None:
    write_split(tmp_path / "d", 5)
    share = files(uri=str(tmp_path / "d" / "*.jsonl"), rank=1, world_size=2, environ={})
    assert [Path(f).name for f in share] == ["training-00001.jsonl", "training-00003.jsonl"]


def test_files_on_every_medium(medium) -> None:  # type: ignore[no-untyped-def]
    location = open_location(medium.uri, **medium.options)
    for i in range(5):
        location.write_bytes(f"training-{i}.jsonl", b"{}\n")
    env = {**medium.options["environ"], "AIP_TRAINING_DATA_URI": medium.sub("training-*")}
    mount = medium.options.get("gcs_mount")
    shares = [files(rank=r, world_size=2, environ=env, gcs_mount=mount) for r in range(2)]
    names = [f.rsplit("/", 1)[1] for s in shares for f in s]
    assert sorted(names) == [f"training-{i}.jsonl" for i in range(5)]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"rank": 0}, UsageError, r"world_size: rank is given but world_size is not"),
        ({"world_size": 2}, UsageError, r"rank: world_size is given but rank is not"),
        ({"rank": 3, "world_size": 2}, UsageError, r"rank: out of range \(got 3\)"),
        ({"by_record": "yes"}, UsageError, r"by_record: not a bool \(got 'yes'\)"),
        ({"split": "train"}, UsageError, r"split: unknown data split \(got 'train'\)"),
        (
            {},
            ConfigError,
            r"AIP_TRAINING_DATA_URI: not set: no data for this split; expected "
            r"a file pattern",
        ),
        (
            {"uri": "/nowhere/at/all/*.jsonl"},
            ConfigError,
            r"uri: matches no file \(got '/nowhere/at/all/\*.jsonl'\)",
        ),
        (
            {"uri": "bq://p.d.t"},
            ConfigError,
            r"uri: a BigQuery table has no files .*vtrain.data.records\(\)",
        ),
    ],
)
def test_errors(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        files(environ={}, **kwargs)  # type: ignore[arg-type]
