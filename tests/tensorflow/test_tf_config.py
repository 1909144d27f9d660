"""The TF_CONFIG written for TensorFlow 2, from every platform's description."""

from __future__ import annotations

import json

import pytest
from platform_examples import AIP_CLUSTER, EXAMPLES, VERTEX_CLUSTER, cluster_spec, tf_config

from vtrain import ClusterInfo, ConfigError
from vtrain_tensorflow import tf_config_for
from vtrain_tensorflow.tf_config_writer import write_tf_config


def config(env: dict[str, str]) -> dict[str, object] | None:
    return tf_config_for(ClusterInfo.from_env(env))


def test_ai_platform_master_becomes_chief_and_the_evaluator_leaves_the_cluster() -> None:
    written = config({"CLUSTER_SPEC": cluster_spec(AIP_CLUSTER, "master", 0)})
    assert written == {
        "cluster": {
            "chief": ["master-0:2222"],
            "worker": ["worker-0:2222", "worker-1:2222"],
            "ps": ["ps-0:2222"],
        },
        "task": {"type": "chief", "index": 0},
    }


def test_vertex_workerpools_become_tf_roles() -> None:
    written = config({"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool3", 2)})
    assert written is not None
    assert sorted(written["cluster"]) == ["chief", "ps", "worker"]  # type: ignore[call-overload]
    assert written["task"] == {"type": "evaluator", "index": 2}


def test_only_the_keys_tensorflow_reads_are_kept() -> None:
    raw = json.loads(
        tf_config(
            {"master": ["m:1"], "worker": ["w:1"], "evaluator": ["e:1"]},
            "worker",
            0,
            trial="3",
            cloud="x",
        )
    )
    written = config({"TF_CONFIG": json.dumps(raw)})
    assert written == {
        "cluster": {"chief": ["m:1"], "worker": ["w:1"]},
        "task": {"type": "worker", "index": 0},
    }


def test_a_single_process_gets_no_tf_config_and_a_stale_one_is_removed() -> None:
    env = {"TF_CONFIG": "{}", "OTHER": "x"}
    assert write_tf_config(ClusterInfo.from_env({}), env) is None
    assert env == {"OTHER": "x"}


def test_written_tf_config_reads_back_as_the_same_replica() -> None:
    for example in EXAMPLES:
        info = ClusterInfo.from_env(example.env)
        if info.source in ("torchrun", "torch_env") or info.role == "reduction_server":
            continue
        env: dict[str, str] = {}
        if write_tf_config(info, env) is None:
            continue
        again = ClusterInfo.from_env(env)
        assert (again.role, again.index, again.rank) == (info.role, info.index, info.rank)


def test_unknown_addresses_are_refused_with_a_reason() -> None:
    env = {
        "TORCHELASTIC_RUN_ID": "r",
        "RANK": "1",
        "WORLD_SIZE": "2",
        "MASTER_ADDR": "h",
        "MASTER_PORT": "1",
    }
    with pytest.raises(
        ConfigError, match=r"TensorFlow needs every replica's address, but torchrun"
    ):
        config(env)


def test_a_reduction_server_has_no_tensorflow_task() -> None:
    (example,) = [e for e in EXAMPLES if "reduction server" in e.name]
    with pytest.raises(ConfigError, match="a reduction_server replica has no TensorFlow task"):
        config(example.env)


def test_parameter_servers_without_a_chief_are_refused_not_left_to_hang() -> None:
    import vtrain

    env = {"TF_CONFIG": tf_config({"worker": ["w:1", "w:2"], "ps": ["p:1"]}, "worker", 0)}
    with pytest.raises(ConfigError, match="parameter-server training needs a chief"):
        vtrain.plugins.get("tensorflow").configure(environ=env)


def test_the_resolver_tells_multi_worker_training_how_many_gpus_there_are() -> None:
    from vtrain_tensorflow.strategy import cluster_resolver

    info = ClusterInfo.from_env({"CLUSTER_SPEC": cluster_spec(AIP_CLUSTER, "worker", 1)})
    assert cluster_resolver(info, gpus=4).num_accelerators() == {"GPU": 4}
    resolver = cluster_resolver(info, gpus=0)
    assert resolver.task_type == "worker" and resolver.task_id == 1
    assert resolver.cluster_spec().as_dict()["chief"] == ["master-0:2222"]
