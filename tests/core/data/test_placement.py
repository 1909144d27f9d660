"""Who reads a split: trainers share it, services read nothing, evaluators read validation whole."""

from __future__ import annotations

import re

import pytest
from data_files import replica_env

from vtrain import ClusterInfo, ConfigError
from vtrain.data.placement import reader_place


@pytest.mark.parametrize(
    ("env", "split", "expected"),
    [
        (replica_env("chief"), "training", (0, 3)),
        (replica_env("worker", 1), "training", (2, 3)),
        (replica_env("worker", 1), "test", (2, 3)),
        (replica_env("ps"), "training", None),
        (replica_env("evaluator"), "validation", (0, 1)),
        (replica_env("evaluator"), "training", None),
        ({}, "training", (0, 1)),
        # A place the framework's plugin exported (MXNet's workers, the chief only scheduling).
        (replica_env("worker", 1, VTRAIN_READER="1/2"), "training", (1, 2)),
        (replica_env("worker", 1, VTRAIN_READER="1/2"), "test", (1, 2)),
        (replica_env("evaluator", VTRAIN_READER="0/2"), "validation", (0, 1)),
        (replica_env("evaluator", VTRAIN_READER="0/2"), "training", None),
        (replica_env("worker", 1, VTRAIN_READER=""), "training", (2, 3)),
        # torchrun: each process trains on its own batches.
        (
            {
                "RANK": "5",
                "WORLD_SIZE": "8",
                "LOCAL_RANK": "1",
                "LOCAL_WORLD_SIZE": "2",
                "GROUP_RANK": "2",
                "TORCHELASTIC_RUN_ID": "x",
                "MASTER_ADDR": "h",
                "MASTER_PORT": "1",
            },
            "training",
            (5, 8),
        ),
    ],
)
def test_reader_place(env: dict[str, str], split: str, expected: tuple[int, int] | None) -> None:
    assert reader_place(ClusterInfo.from_env(env), env, split) == expected


@pytest.mark.parametrize("text", ["7", "2/2", "-1/2", "1/", "a/b", "1/2/3", "\u00b2/3"])
def test_an_exported_place_that_is_no_place_is_refused(text: str) -> None:
    env = replica_env("worker", 0, VTRAIN_READER=text)
    with pytest.raises(
        ConfigError,
        match=rf"VTRAIN_READER: not a place among the readers \(got {re.escape(repr(text))}\); "
        r"expected rank/readers with rank < readers",
    ):
        reader_place(ClusterInfo.from_env(env), env, "training")
