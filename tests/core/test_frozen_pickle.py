"""Every frozen value pickles and comes back equal and still frozen.

Spawned processes (a DataLoader's workers, a multiprocessing pool) receive their
arguments by pickle; a ClusterInfo or a Share handed to one must survive the trip.
"""

from __future__ import annotations

import pickle

import pytest
from platform_examples import cluster_spec

from vtrain import ClusterInfo, RunContext
from vtrain.data import Share
from vtrain.frozen import Frozen, FrozenError

SPEC = cluster_spec(
    {"workerpool0": ["chief:2222"], "workerpool1": ["w0:2222", "w1:2222"]}, "workerpool1", 1
)
VALUES = [
    ClusterInfo.from_env({"CLUSTER_SPEC": SPEC}),
    ClusterInfo.from_env({}),
    RunContext.from_env({"AIP_MODEL_DIR": "gs://b/model", "CLOUD_ML_TRIAL_ID": "3"}),
    Share(split="training", uri="/d/*", files=["/d/a", "/d/c"], rank=1, world_size=2),
    Share.empty("validation").part(0, 1),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_frozen_value_pickles(value: Frozen, protocol: int) -> None:
    back = pickle.loads(pickle.dumps(value, protocol))
    assert type(back) is type(value)
    assert back == value
    assert repr(back) == repr(value)
    # Read-only mappings stay read-only.
    assert [type(v) for v in back._fields().values()] == [type(v) for v in value._fields().values()]
    with pytest.raises(FrozenError):
        back.rank = 5  # type: ignore[attr-defined,misc]
