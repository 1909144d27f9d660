"""vtrain's TF_CONFIG reader against TensorFlow's own, on generated documents.

Whenever TensorFlow accepts a TF_CONFIG (`TFConfigClusterResolver` reads it and
`multi_worker_util` validates the task), vtrain must read the same role, index,
cluster members and leader. The normalisations vtrain applies on purpose:

- `master` is AI Platform's chief: vtrain reads it as `chief`; TF2 refuses it.
- An evaluator is never vtrain's chief: TensorFlow calls it "a chief of its own"
  (`multi_worker_util.is_chief`); vtrain's chief is the one replica that writes
  for the whole job.
- `sparseCluster` (Kubeflow's dynamic workers) is read by vtrain; TensorFlow's
  resolver ignores the key and runs the task alone. Both follow from the task.
- Addresses must be `host:port` for vtrain; TensorFlow takes any string (it
  fails later, when it dials it).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtrain import ClusterInfo, VtrainError

tf = pytest.importorskip("tensorflow")
from tensorflow.python.distribute import multi_worker_util  # noqa: E402

ROLES = ("chief", "master", "worker", "ps", "evaluator")
SEEN: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    yield
    print(f"\ndifferential TF_CONFIG cases: {dict(SEEN)}")


@st.composite
def tf_configs(draw: st.DrawFn) -> dict[str, Any]:
    """A TF_CONFIG as a launcher might write it: any mix of roles, list or sparse."""
    counts = {
        "chief": draw(st.integers(0, 1)),
        "master": draw(st.integers(0, 1)),
        "worker": draw(st.integers(0, 4)),
        "ps": draw(st.integers(0, 2)),
        "evaluator": draw(st.integers(0, 1)),
    }
    cluster: dict[str, Any] = {}
    for role, count in counts.items():
        if not count:
            continue
        addresses = [f"{role}-{i}.job.svc:{2222 + i}" for i in range(count)]
        if role == "worker" and draw(st.booleans()):
            # Kubeflow's sparse form: some indexes, as {"index": address}.
            listed = draw(st.sets(st.integers(0, count - 1), min_size=1))
            cluster[role] = {str(i): addresses[i] for i in sorted(listed)}
        else:
            cluster[role] = addresses
    task_roles = [r for r in cluster] + ["evaluator"]
    task_type = draw(st.sampled_from(task_roles))
    # Mostly a task of the cluster; sometimes an index past its end.
    in_range = st.integers(0, max(counts[task_type] - 1, 0))
    task_index = draw(in_range | in_range | st.integers(0, 4))
    key = "sparseCluster" if draw(st.integers(0, 9)) == 0 else "cluster"
    return {key: cluster, "task": {"type": task_type, "index": task_index}}


def tensorflows_reading(doc: dict[str, Any]) -> dict[str, Any] | None:
    """TensorFlow's reading, or None where TensorFlow itself refuses the document."""
    saved = os.environ.get("TF_CONFIG")
    os.environ["TF_CONFIG"] = json.dumps(doc)
    try:
        resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        spec = resolver.cluster_spec()
        task_type, task_id = resolver.task_type, resolver.task_id
        chief = multi_worker_util.is_chief(spec, task_type, task_id)
    except (ValueError, TypeError, KeyError):
        return None
    finally:
        if saved is None:
            os.environ.pop("TF_CONFIG", None)
        else:
            os.environ["TF_CONFIG"] = saved
    members = {
        job: {i: spec.task_address(job, i) for i in spec.task_indices(job)} for job in spec.jobs
    }
    return {"type": task_type, "index": task_id, "members": members, "chief": chief}


def vtrains_reading(info: ClusterInfo) -> dict[str, Any]:
    members = {
        role: {i: a for i, a in enumerate(replicas) if a is not None}
        for role, replicas in info.cluster.items()
    }
    return {"type": info.role, "index": info.index, "members": members, "chief": info.is_chief}


def refusal_reason(doc: dict[str, Any], error: VtrainError) -> str | None:
    """Why vtrain may refuse a document TensorFlow accepts; None when it may not."""
    cluster = doc.get("cluster", {})
    if "master" in cluster and "chief" in cluster:
        return "master beside chief: two chiefs (TF2 refuses master anyway)"
    if "chief" not in cluster and "worker" not in cluster and "master" not in cluster:
        return "no chief and no worker: nothing would train"
    if "not listed in the sparse cluster" in str(error):
        return "own task not listed: TensorFlow checks only index < number listed"
    return None


def acceptance_reason(doc: dict[str, Any]) -> str | None:
    """Why vtrain may accept a document TensorFlow refuses; None when it may not."""
    cluster, task = doc["cluster"], doc["task"]
    if "master" in cluster or task["type"] == "master":
        return "master, AI Platform's chief (TF2 refuses the name)"
    if len(cluster.get("evaluator", [])) > 1:
        return "several evaluators (Vertex's workerpool3 may hold more than one)"
    listed = cluster.get(task["type"])
    if isinstance(listed, dict) and str(task["index"]) in listed:
        return "a listed sparse task whose index is past the number listed"
    return None


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=tf_configs())
def test_vtrain_reads_what_tensorflow_reads(doc: dict[str, Any]) -> None:
    theirs = tensorflows_reading(doc)
    try:
        info = ClusterInfo.from_env({"TF_CONFIG": json.dumps(doc)})
    except VtrainError as e:
        if theirs is None:
            SEEN["both refuse"] += 1
            return
        reason = refusal_reason(doc, e)
        assert reason is not None, (doc, str(e))
        SEEN[f"vtrain refuses, TF accepts: {reason}"] += 1
        return
    if not any(doc.get("cluster", {}).values()) and "sparseCluster" not in doc:
        # Documented: a cluster that lists nobody is one process (TensorFlow runs it alone).
        assert info == ClusterInfo.single()
        SEEN["no task listed: one process for both"] += 1
        return
    if "sparseCluster" in doc:
        # Documented: TensorFlow ignores sparseCluster and runs the task alone.
        SEEN["sparseCluster: read by vtrain, ignored by TF"] += 1
        return
    if theirs is None:
        reason = acceptance_reason(doc)
        assert reason is not None, doc
        SEEN[f"only vtrain accepts: {reason}"] += 1
        return
    mine = vtrains_reading(info)
    if doc["task"]["type"] == "evaluator":
        # Documented: TensorFlow's evaluator is "a chief of its own"; never vtrain's chief.
        assert theirs["chief"] and not mine["chief"]
        theirs["chief"] = mine["chief"]
    assert mine == theirs, doc
    trainers = sum(len(theirs["members"].get(r, {})) for r in ("chief", "worker"))
    assert info.num_trainers == trainers
    SEEN["both accept, and agree"] += 1


@pytest.mark.parametrize("task_type", ["chief", "worker", "ps"])
def test_kubeflow_dynamic_workers_follow_the_task(task_type: str) -> None:
    # What Kubeflow writes with enableDynamicWorker (the operator's own conversion).
    ps = ["job-ps-0:2222", "job-ps-1:2222"]
    sparse = {
        "chief": {"worker": {}, "ps": []},
        "worker": {"worker": {"3": "job-worker-3:2222"}, "ps": ps},
        "ps": {"worker": {}, "ps": [ps[1]]},
    }[task_type]
    # The operator lists a ps's own address alone, at position 0, with its real index.
    index = {"chief": 0, "worker": 3, "ps": 1}[task_type]
    doc = {"sparseCluster": sparse, "task": {"type": task_type, "index": index}}
    info = ClusterInfo.from_env({"TF_CONFIG": json.dumps(doc)})
    if task_type == "chief":
        assert info == ClusterInfo.single()  # it lists nobody: TensorFlow runs it alone too
        return
    own = {"worker": "job-worker-3:2222", "ps": ps[1]}[task_type]
    assert (info.role, info.index, info.address, info.sparse) == (task_type, index, own, True)
    # Every worker of the job derives the same count: the one trainer it can see.
    assert info.num_trainers == (1 if task_type == "worker" else 0)
