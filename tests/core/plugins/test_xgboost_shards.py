"""Each trainer's rows and files: every row once, in rank order; bad inputs named."""

from __future__ import annotations

import pytest
from platform_examples import VERTEX_CLUSTER, cluster_spec, tf_config

from vtrain import ClusterInfo, UsageError
from vtrain_xgboost import Rendezvous, XGBoostHandle, row_block

CLUSTER = {"chief": ["10.0.0.2:2222"], "worker": ["10.0.0.3:2222"]}


def handle_of(env: dict[str, str]) -> XGBoostHandle:
    """The handle `configure` returns for `env`, without entering a collective (no XGBoost)."""
    info = ClusterInfo.from_env(env)
    rv = None if info.rank is None else Rendezvous.from_cluster(info)
    return XGBoostHandle(info=info, is_leader=False, rendezvous=rv, link=None, environ=env)


@pytest.mark.parametrize(("total", "world"), [(1, 1), (10, 3), (3000, 3), (7, 7), (100, 8)])
def test_row_blocks_cover_every_row_once_in_rank_order(total: int, world: int) -> None:
    blocks = [row_block(total, r, world) for r in range(world)]
    rows = [i for b in blocks for i in range(total)[b]]
    assert rows == list(range(total))
    assert max(b.stop - b.start for b in blocks) - min(b.stop - b.start for b in blocks) <= 1


def test_rank_1_of_3_reads_the_second_block() -> None:
    assert row_block(3000, 1, 3) == slice(1000, 2000)
    assert row_block(10, 0, 3) == slice(0, 4) and row_block(10, 2, 3) == slice(7, 10)


def test_shard_goes_round_robin_and_row_block_in_blocks() -> None:
    # `shard` means what it means on every handle; the contiguous split has its own name.
    files = [f"part-{i}.csv" for i in range(5)]
    handles = [handle_of({"TF_CONFIG": tf_config(CLUSTER, role, 0)}) for role in CLUSTER]
    assert [h.rank for h in handles] == [0, 1]
    assert [h.shard(files) for h in handles] == [files[0::2], files[1::2]]
    assert [h.row_block(files) for h in handles] == [files[:3], files[3:]]
    assert [h.rows(5) for h in handles] == [slice(0, 3), slice(3, 5)]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: row_block(2, 0, 3),
            r"rows: cannot give each of 3 trainer\(s\) at least one "
            r"row \(got 2\); expected an int >= 3",
        ),
        (lambda: row_block(True, 0, 1), r"rows: .* \(got True\)"),
        (
            lambda: handle_of({"TF_CONFIG": tf_config(CLUSTER, "worker", 0)}).row_block(["a"]),
            r"rows: cannot give each of 2 trainer\(s\) at least one row \(got 1\)",
        ),
        (
            lambda: handle_of(
                {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool2", 0)}
            ).shard(["a", "b"]),
            r"shard: a ps replica has no share: it does not train \(got 'ps'\)",
        ),
        (
            lambda: handle_of(
                {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool2", 0)}
            ).row_block(["a", "b"]),
            r"rows: a ps replica has no share: it does not train \(got 'ps'\)",
        ),
    ],
)
def test_bad_shard_inputs_are_named(call: object, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        call()  # type: ignore[operator]
