"""What the MXNet plugin exports for the core: each replica's place in the data, and its variables.

`prepare` alone (no mxnet imported): the core reads VTRAIN_READER to deal the
data and VTRAIN_FRAMEWORK_VARIABLES to keep a parent's DMLC variables out of a
local job's replicas; it names no DMLC variable itself.
"""

from __future__ import annotations

import pytest
from platform_examples import VERTEX_CLUSTER, cluster_spec

from vtrain import ClusterInfo, plugins
from vtrain.data.placement import reader_place
from vtrain.local.environment import inherited

# With an interface chosen, ps-lite finds this host by it: no DMLC_NODE_HOST.
WRITTEN = "DMLC_NUM_SERVER,DMLC_NUM_WORKER,DMLC_PS_ROOT_PORT,DMLC_PS_ROOT_URI,DMLC_ROLE"


# (pool, index, chief_trains, VTRAIN_READER, the training split's place)
PLACES = [
    # The documented mapping: the chief schedules, so the two workers share the data.
    ("workerpool1", 0, False, "0/2", (0, 2)),
    ("workerpool1", 1, False, "1/2", (1, 2)),
    # The chief trains too: the trainers in rank order, the core's own rule.
    ("workerpool0", 0, True, None, (0, 3)),
    ("workerpool1", 1, True, None, (2, 3)),
    # Off the kvstore: an evaluator reads the validation split alone.
    ("workerpool3", 2, False, None, None),
]


@pytest.mark.parametrize(("pool", "index", "chief_trains", "exported", "place"), PLACES)
def test_a_replica_reads_the_share_the_plugin_exports(
    pool: str, index: int, chief_trains: bool, exported: str | None, place: tuple[int, int] | None
) -> None:
    env = {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, pool, index), "VTRAIN_READER": "9/10"}
    info = plugins.get("mxnet", {}).prepare(None, env, chief_trains=chief_trains)
    assert env.get("VTRAIN_READER") == exported  # a stale one is removed
    assert reader_place(ClusterInfo.from_env(env), env, "training") == place
    assert reader_place(info, env, "validation") == ((0, 1) if pool == "workerpool3" else place)


def test_the_dmlc_variables_it_sets_stay_out_of_a_local_jobs_replicas() -> None:
    env = {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool1", 0), "DMLC_INTERFACE": "lo"}
    plugins.get("mxnet", {}).prepare(None, env)
    assert env["VTRAIN_FRAMEWORK_VARIABLES"] == WRITTEN  # the user's interface is not the job's
    assert inherited({**env, "PATH": "/b"}) == {"DMLC_INTERFACE": "lo", "PATH": "/b"}


def test_off_the_kvstore_no_variable_is_listed() -> None:
    env = {
        "CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool3", 0),
        "DMLC_ROLE": "worker",
        "VTRAIN_FRAMEWORK_VARIABLES": "DMLC_ROLE",
    }
    plugins.get("mxnet", {}).prepare(None, env)
    assert "DMLC_ROLE" not in env and "VTRAIN_FRAMEWORK_VARIABLES" not in env
