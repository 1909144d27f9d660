"""Whatever the platform sends, the outcome is a ClusterInfo or a vtrain error, never a crash."""

from __future__ import annotations

import json
from typing import Any

from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st
from platform_examples import EXAMPLES

from vtrain import ClusterInfo, VtrainError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
names = st.sampled_from(
    [
        "workerpool0",
        "workerpool1",
        "workerpool2",
        "workerpool3",
        "workerpool9",
        "chief",
        "master",
        "worker",
        "ps",
        "evaluator",
        "",
        "Worker",
    ]
)
addresses = st.one_of(
    st.builds(
        lambda h, p: f"{h}:{p}",
        st.sampled_from(["h", "[::1]", "", "a b", "::1"]),
        st.integers(-5, 70000),
    ),
    json_values,
)
specs = st.fixed_dictionaries(
    {},
    optional={
        "cluster": st.dictionaries(
            names, st.lists(addresses, max_size=4) | json_values, max_size=5
        ),
        "task": st.fixed_dictionaries(
            {},
            optional={
                "type": names | json_values,
                "index": st.integers(-2, 6) | json_values,
                "trial": st.sampled_from(["", "1", "../x", None]) | json_values,
            },
        ),
        "job": json_values | st.just('{"workerPoolSpecs": [{}, {}, {"containerSpec": 1}]}'),
        "environment": st.just("cloud"),
    },
)
variables = st.sampled_from(
    [
        "CLUSTER_SPEC",
        "TF_CONFIG",
        "RANK",
        "WORLD_SIZE",
        "LOCAL_RANK",
        "LOCAL_WORLD_SIZE",
        "MASTER_ADDR",
        "MASTER_PORT",
        "TORCHELASTIC_RUN_ID",
        "PET_NPROC_PER_NODE",
        "PET_NNODES",
        "WORKER_ADDRS",
        "WORKER_PORT",
        "CLOUD_ML_TRIAL_ID",
        "GROUP_RANK",
        "VTRAIN_CLUSTER_SOURCE",
        # Kubeflow Trainer v2's nodes (the trainjob reader).
        "PET_NODE_RANK",
        "PET_MASTER_ADDR",
        "PET_MASTER_PORT",
        "DMLC_TRACKER_URI",
        "DMLC_TRACKER_PORT",
        "DMLC_TASK_ID",
        "DMLC_NUM_WORKER",
        "JOB_COMPLETION_INDEX",
        "VTRAIN_TRAINJOB_LAYOUT",
        "VTRAIN_JOBSET",
        "HOSTNAME",
    ]
)
env_values = st.one_of(
    st.text(max_size=10),
    st.integers(-3, 40).map(str),
    specs.map(json.dumps),
    st.sampled_from(["torchrun", "tf_config", "cluster_spec", "torch_env", "trainjob", "single"]),
    st.builds(
        lambda counts, port: json.dumps({**counts, "port": port}),
        st.dictionaries(
            st.sampled_from(["chief", "worker", "ps", "evaluator", "x"]), st.integers(-1, 3)
        ),
        st.integers(-1, 70000),
    ),  # fmt: skip
)


def outcome(env: dict[str, str]) -> ClusterInfo | VtrainError:
    try:
        info = ClusterInfo.from_env(env)
    except VtrainError as e:
        assert str(e)
        return e
    # Whatever was accepted must be self-consistent.
    assert info.role in info.cluster or info.role == "evaluator"
    if info.sparse:
        # Only listed tasks count, and this replica is one of them, at its own index.
        assert info.rank is None or info.trainers[info.rank] is not None
    else:
        assert info.rank is None or 0 <= info.rank < info.num_trainers
    json.dumps(info.to_dict())
    return info


@examples(400)
@given(spec=specs, variable=st.sampled_from(["CLUSTER_SPEC", "TF_CONFIG"]))
def test_arbitrary_documents(spec: dict[str, Any], variable: str) -> None:
    outcome({variable: json.dumps(spec)})


@examples(300)
@given(text=st.text(max_size=40))
def test_arbitrary_text(text: str) -> None:
    outcome({"CLUSTER_SPEC": text})
    outcome({"TF_CONFIG": text})


@examples(400)
@given(env=st.dictionaries(variables, env_values, max_size=6))
def test_arbitrary_environments(env: dict[str, str]) -> None:
    outcome(env)


def _mutate(data: st.DataObject, value: Any, depth: int = 0) -> Any:
    """Change one thing somewhere inside a JSON value: drop, replace, or recurse."""
    if isinstance(value, dict) and value and depth < 4:
        key = data.draw(st.sampled_from(sorted(value)))
        choice = data.draw(st.sampled_from(["drop", "replace", "recurse"]))
        copy = dict(value)
        if choice == "drop":
            del copy[key]
        elif choice == "replace":
            copy[key] = data.draw(json_values)
        else:
            copy[key] = _mutate(data, value[key], depth + 1)
        return copy
    if isinstance(value, list) and value and depth < 4:
        i = data.draw(st.integers(0, len(value) - 1))
        copy = list(value)
        copy[i] = _mutate(data, value[i], depth + 1)
        return copy
    return data.draw(json_values)


@examples(500)
@given(data=st.data())
def test_mutated_real_examples(data: st.DataObject) -> None:
    example = data.draw(st.sampled_from([e for e in EXAMPLES if e.env]))
    env = dict(example.env)
    variable = data.draw(st.sampled_from(sorted(env)))
    try:
        parsed = json.loads(env[variable])
    except ValueError:
        env[variable] = data.draw(env_values)
    else:
        env[variable] = json.dumps(_mutate(data, parsed))
    outcome(env)
