"""Task ids, the tracker's address and the DMLC variables: pure functions of the cluster.

Plain dicts for the environment; no XGBoost is imported and nothing listens.
"""

from __future__ import annotations

import pytest
from platform_examples import AIP_CLUSTER, VERTEX_CHIEF, VERTEX_CLUSTER, cluster_spec, tf_config

from vtrain import ClusterInfo, ConfigError, UsageError
from vtrain_xgboost import Rendezvous, task_id
from vtrain_xgboost.plugin import XGBoostPlugin

XGBOOSTJOB_WORKER_1 = {  # what Kubeflow's XGBoostJob sets on its second worker
    "MASTER_ADDR": "xgb-job-master-0",
    "MASTER_PORT": "9999",
    "WORLD_SIZE": "3",
    "RANK": "2",
    "WORKER_ADDRS": "xgb-job-worker-0,xgb-job-worker-1",
    "WORKER_PORT": "9999",
}


@pytest.mark.parametrize(
    ("rank", "world", "expected"),
    [(0, 1, "0"), (0, 3, "0"), (2, 3, "2"), (2, 11, "02"), (10, 11, "10"), (7, 101, "007")],
)
def test_task_ids_are_zero_padded_to_the_largest_rank(rank: int, world: int, expected: str) -> None:
    assert task_id(rank, world) == expected


@pytest.mark.parametrize("world", [2, 10, 11, 100, 101, 1000])
def test_string_order_of_task_ids_is_rank_order(world: int) -> None:
    # XGBoost's tracker sorts task ids as strings: "10" < "2", but "02" < "10".
    ids = [task_id(r, world) for r in range(world)]
    assert sorted(ids) == ids and len(set(map(len, ids))) == 1


@pytest.mark.parametrize(
    ("env", "rank", "tracker", "bind", "source"),
    [
        (
            {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool1", 1)},
            2,
            VERTEX_CHIEF,
            "0.0.0.0",
            "CLUSTER_SPEC: cluster",
        ),
        (
            {"CLUSTER_SPEC": cluster_spec(AIP_CLUSTER, "master", 0)},
            0,
            "master-0:2222",
            "0.0.0.0",
            "CLUSTER_SPEC: cluster",
        ),
        (
            {
                "TF_CONFIG": tf_config(
                    {"chief": ["10.0.0.2:2222"], "worker": ["10.0.0.3:2222", "10.0.0.4:2222"]},
                    "worker",
                    0,
                )
            },
            1,
            "10.0.0.2:2222",
            "10.0.0.2",
            "TF_CONFIG: cluster",
        ),
        (XGBOOSTJOB_WORKER_1, 2, "xgb-job-master-0:9999", "0.0.0.0", "WORLD_SIZE"),
    ],
    ids=["vertex-worker-1", "aiplatform-master", "tf-config-worker-0", "xgboostjob-worker-1"],
)
def test_every_trainer_meets_at_the_chiefs_address(
    env: dict[str, str], rank: int, tracker: str, bind: str, source: str
) -> None:
    rv = Rendezvous.from_cluster(ClusterInfo.from_env(env))
    assert (rv.rank, rv.world_size, rv.tracker_address) == (rank, 3, tracker)
    assert rv.task_id == str(rank) and rv.hosts_tracker == (rank == 0)
    # A host name may not resolve on the chief itself yet: listen on every interface.
    assert rv.bind_host == bind
    assert rv.world_source == source


def test_the_dmlc_variables_name_the_tracker_and_the_task() -> None:
    info = ClusterInfo.from_env(XGBOOSTJOB_WORKER_1)
    env: dict[str, str] = {}
    variables = XGBoostPlugin().environment(info, env)
    assert variables == XGBoostPlugin().environment(info, env) and env == {}  # pure
    assert variables == {
        "DMLC_TRACKER_URI": "xgb-job-master-0",
        "DMLC_TRACKER_PORT": "9999",
        "DMLC_TASK_ID": "2",
        "DMLC_NUM_WORKER": "3",
    }


@pytest.mark.parametrize("pool", ["workerpool2", "workerpool3"])
def test_ps_and_evaluators_are_outside_the_collective(pool: str) -> None:
    info = ClusterInfo.from_env({"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, pool, 0)})
    variables = XGBoostPlugin().environment(info, {})
    assert set(variables) == {
        "DMLC_TRACKER_URI",
        "DMLC_TRACKER_PORT",
        "DMLC_TASK_ID",
        "DMLC_NUM_WORKER",
    } and set(variables.values()) == {None}
    with pytest.raises(UsageError, match=rf"ClusterInfo.role: a {info.role} replica is not part"):
        Rendezvous.from_cluster(info)


def test_one_process_with_nothing_set_has_no_tracker() -> None:
    rv = Rendezvous.from_cluster(ClusterInfo.from_env({}))
    assert (rv.rank, rv.world_size, rv.tracker_address, rv.distributed) == (0, 1, None, False)
    assert set(rv.environment().values()) == {None}  # stale DMLC_* from a shell are removed


def test_an_ipv6_chief_is_refused_with_the_reason() -> None:
    env = {
        "TF_CONFIG": tf_config(
            {"chief": ["[fd00::2]:2222"], "worker": ["[fd00::3]:2222"]}, "worker", 0
        )
    }
    with pytest.raises(
        ConfigError,
        match=r"TF_CONFIG: cluster: XGBoost's tracker listens on "
        r"IPv4 only \(got '\[fd00::2\]:2222'\); expected an IPv4 address",
    ):
        Rendezvous.from_cluster(ClusterInfo.from_env(env))


def test_a_cluster_without_the_chiefs_address_is_refused() -> None:
    # torchrun-like counts without addresses: nowhere to host the tracker.
    info = ClusterInfo(
        cluster={"chief": (None,), "worker": (None,)}, role="worker", index=0, source="torchrun"
    )
    with pytest.raises(
        ConfigError,
        match=r"MASTER_ADDR:MASTER_PORT: the chief's address is "
        r"unknown, and XGBoost's tracker runs there",
    ):
        Rendezvous.from_cluster(info)
