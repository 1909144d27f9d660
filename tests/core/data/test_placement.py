"""Who reads a split: trainers share it, services read nothing, evaluators read validation whole."""

from __future__ import annotations

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
        # MXNet: the scheduler and servers read nothing; the workers share by DMLC_NUM_WORKER.
        (replica_env("chief", DMLC_ROLE="scheduler"), "training", None),
        (replica_env("ps", DMLC_ROLE="server"), "training", None),
        (replica_env("worker", 1, DMLC_ROLE="worker", DMLC_NUM_WORKER="2"), "training", (1, 2)),
        (replica_env("worker", 1, DMLC_ROLE="worker", DMLC_NUM_WORKER="3"), "training", (2, 3)),
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


def test_a_dmlc_worker_count_that_fits_no_placement_is_refused() -> None:
    env = replica_env("worker", 0, DMLC_ROLE="worker", DMLC_NUM_WORKER="7")
    with pytest.raises(ConfigError, match=r"DMLC_NUM_WORKER: does not match .*\(got '7'\)"):
        reader_place(ClusterInfo.from_env(env), env, "training")
