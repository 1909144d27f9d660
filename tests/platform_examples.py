"""The environments of ../shared/PLATFORM.md, each with the role and rank it must give.

One table, used by the parser tests, the `vtrain info` tests and the property tests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

VERTEX_CHIEF = "cmle-training-workerpool0-ab-0:2222"
VERTEX_CLUSTER = {
    "workerpool0": [VERTEX_CHIEF],
    "workerpool1": ["cmle-training-workerpool1-ab-0:2222", "cmle-training-workerpool1-ab-1:2222"],
    "workerpool2": ["cmle-training-workerpool2-ab-0:2222", "cmle-training-workerpool2-ab-1:2222"],
    "workerpool3": [
        "cmle-training-workerpool3-ab-0:2222",
        "cmle-training-workerpool3-ab-1:2222",
        "cmle-training-workerpool3-ab-2:2222",
    ],
}

REDUCTION_JOB = {
    "workerPoolSpecs": [
        {"machineSpec": {"machineType": "a2-highgpu-8g"}, "replicaCount": "1"},
        {"machineSpec": {"machineType": "a2-highgpu-8g"}, "replicaCount": "2"},
        {
            "containerSpec": {
                "imageUri": "us-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"
            },
            "replicaCount": "2",
        },
    ]
}

AIP_CLUSTER = {
    "master": ["master-0:2222"],
    "worker": ["worker-0:2222", "worker-1:2222"],
    "ps": ["ps-0:2222"],
    "evaluator": ["evaluator-0:2222"],
}

VERTEX_TF_CLUSTER = {
    "chief": ["training-workerpool0-X-0:2222"],
    "ps": ["training-workerpool2-X-0:2222"],
    "worker": ["training-workerpool1-X-0:2222", "training-workerpool1-X-1:2222"],
}


def cluster_spec(cluster: dict[str, Any], task_type: str, index: int, **extra: Any) -> str:
    """A CLUSTER_SPEC document."""
    task = {"type": task_type, "index": index}
    if "trial" in extra:
        task["trial"] = extra.pop("trial")
    return json.dumps({"cluster": cluster, "environment": "cloud", "task": task, **extra})


def tf_config(cluster: dict[str, Any], task_type: str, index: int, **task_extra: Any) -> str:
    """A TF_CONFIG document, with the keys Vertex adds that prove nothing."""
    return json.dumps(
        {
            "cluster": cluster,
            "environment": "cloud",
            "job": {},
            "task": {"type": task_type, "index": index, **task_extra},
        }
    )


@dataclass(frozen=True)
class Example:
    """An environment and what vtrain must read from it."""

    name: str
    env: dict[str, str]
    source: str
    platform: str | None
    role: str
    index: int
    rank: int | None
    num_trainers: int
    is_chief: bool
    chief_address: str | None
    trial_id: str | None = None


EXAMPLES = [
    Example("nothing set", {}, "single", None, "chief", 0, 0, 1, True, None),
    Example(
        "vertex chief",
        {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool0", 0, trial="", job={})},
        "cluster_spec",
        "vertex",
        "chief",
        0,
        0,
        3,
        True,
        VERTEX_CHIEF,
    ),
    Example(
        "vertex worker 1, tuning trial",
        {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool1", 1, trial="7")},
        "cluster_spec",
        "vertex",
        "worker",
        1,
        2,
        3,
        False,
        VERTEX_CHIEF,
        "7",
    ),
    Example(
        "vertex parameter server",
        {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool2", 1)},
        "cluster_spec",
        "vertex",
        "ps",
        1,
        None,
        3,
        False,
        VERTEX_CHIEF,
    ),
    Example(
        "vertex evaluator",
        {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool3", 2)},
        "cluster_spec",
        "vertex",
        "evaluator",
        2,
        None,
        3,
        False,
        VERTEX_CHIEF,
    ),
    Example(
        "vertex reduction server (job as a JSON string)",
        {
            "CLUSTER_SPEC": cluster_spec(
                {k: VERTEX_CLUSTER[k] for k in ("workerpool0", "workerpool1", "workerpool2")},
                "workerpool2",
                0,
                job=json.dumps(REDUCTION_JOB),
            )
        },
        "cluster_spec",
        "vertex",
        "reduction_server",
        0,
        None,
        3,
        False,
        VERTEX_CHIEF,
    ),
    Example(
        "vertex single replica, chief variant, open_ports",
        {
            "CLUSTER_SPEC": cluster_spec(
                {"chief": ["cmle-training-workerpool0-ab-0:2222"]},
                "chief",
                0,
                open_ports=[2222],
                job={"workerPoolSpecs": [{"replicaCount": "1"}]},
            )
        },
        "cluster_spec",
        "vertex",
        "chief",
        0,
        0,
        1,
        True,
        VERTEX_CHIEF,
    ),
    Example(
        "vertex distributed: CLUSTER_SPEC with the matching TF_CONFIG and PyTorch variables",
        {
            "CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool1", 0, trial="1"),
            "TF_CONFIG": tf_config(VERTEX_TF_CLUSTER, "worker", 0, trial="1", cloud="Y"),
            "MASTER_ADDR": "cmle-training-workerpool0-ab-0",
            "MASTER_PORT": "2222",
            "WORLD_SIZE": "3",
            "RANK": "1",
            "CLOUD_ML_TRIAL_ID": "1",
        },
        "cluster_spec",
        "vertex",
        "worker",
        0,
        1,
        3,
        False,
        VERTEX_CHIEF,
        "1",
    ),
    Example(
        "ai platform master",
        {"CLUSTER_SPEC": cluster_spec(AIP_CLUSTER, "master", 0, trial="3", job="{}")},
        "cluster_spec",
        "aiplatform",
        "chief",
        0,
        0,
        3,
        True,
        "master-0:2222",
        "3",
    ),
    Example(
        "ai platform worker 1",
        {"CLUSTER_SPEC": cluster_spec(AIP_CLUSTER, "worker", 1)},
        "cluster_spec",
        "aiplatform",
        "worker",
        1,
        2,
        3,
        False,
        "master-0:2222",
    ),
    Example(
        "TF_CONFIG alone, Vertex worker 0 (evaluator outside the cluster)",
        {"TF_CONFIG": tf_config(VERTEX_TF_CLUSTER, "worker", 0, trial="1", cloud="Y")},
        "tf_config",
        None,
        "worker",
        0,
        1,
        3,
        False,
        "training-workerpool0-X-0:2222",
        "1",
    ),
    Example(
        "TF_CONFIG evaluator outside the cluster",
        {"TF_CONFIG": tf_config(VERTEX_TF_CLUSTER, "evaluator", 0)},
        "tf_config",
        None,
        "evaluator",
        0,
        None,
        3,
        False,
        "training-workerpool0-X-0:2222",
    ),
    Example(
        "TF_CONFIG master (AI Platform default)",
        {"TF_CONFIG": tf_config({"master": ["m:2222"], "worker": ["w:2222"]}, "master", 0)},
        "tf_config",
        None,
        "chief",
        0,
        0,
        2,
        True,
        "m:2222",
    ),
    Example(
        "Kubeflow TFJob with enableDynamicWorker: sparseCluster, a worker sees itself",
        {
            "TF_CONFIG": json.dumps(
                {
                    "sparseCluster": {"worker": {"2": "w2:2222"}, "ps": ["p0:2222", "p1:2222"]},
                    "task": {"type": "worker", "index": 2},
                }
            )
        },
        "tf_config",
        None,
        "worker",
        2,
        2,
        1,
        False,
        None,
    ),
    Example(
        "Kubeflow TFJob: evaluator inside, sparse workers",
        {
            "TF_CONFIG": tf_config(
                {
                    "chief": ["c:2222"],
                    "worker": {"1": "w1:2222", "3": "w3:2222"},
                    "evaluator": ["e:2222"],
                },
                "worker",
                3,
            )
        },
        # Only listed tasks count, as TensorFlow counts them; indexes keep their meaning.
        "tf_config",
        None,
        "worker",
        3,
        4,
        3,
        False,
        "c:2222",
    ),
    Example(
        "TF_CONFIG workers only: worker 0 leads",
        {"TF_CONFIG": tf_config({"worker": ["localhost:27182", "localhost:27183"]}, "worker", 0)},
        "tf_config",
        None,
        "worker",
        0,
        0,
        2,
        True,
        "localhost:27182",
    ),
    Example(
        "gcloud local train: TF_CONFIG on localhost",
        {
            "TF_CONFIG": tf_config(
                {
                    "master": ["localhost:27182"],
                    "ps": ["localhost:27183"],
                    "worker": ["localhost:27184"],
                },
                "ps",
                0,
            )
        },
        "tf_config",
        None,
        "ps",
        0,
        None,
        2,
        False,
        "localhost:27182",
    ),
    Example(
        "torchrun process 5 of 8 on node 1",
        {
            "TORCHELASTIC_RUN_ID": "job",
            "TORCHELASTIC_RESTART_COUNT": "0",
            "RANK": "5",
            "LOCAL_RANK": "1",
            "WORLD_SIZE": "8",
            "LOCAL_WORLD_SIZE": "4",
            "GROUP_RANK": "1",
            "MASTER_ADDR": "node0",
            "MASTER_PORT": "29500",
        },
        "torchrun",
        None,
        "worker",
        4,
        5,
        8,
        False,
        "node0:29500",
    ),
    Example(
        "Kubeflow PyTorchJob, 2 pods x 8 processes: WORLD_SIZE counts processes",
        {
            "MASTER_ADDR": "job-master-0",
            "MASTER_PORT": "23456",
            "WORLD_SIZE": "16",
            "RANK": "1",
            "PET_NPROC_PER_NODE": "8",
            "PET_NNODES": "2",
        },
        "torch_env",
        "kubeflow",
        "worker",
        0,
        1,
        2,
        False,
        "job-master-0:23456",
    ),
    Example(
        "Kubeflow XGBoostJob worker 1",
        {
            "MASTER_ADDR": "xgb-master-0",
            "MASTER_PORT": "9999",
            "WORLD_SIZE": "3",
            "RANK": "2",
            "WORKER_ADDRS": "xgb-worker-0,xgb-worker-1",
            "WORKER_PORT": "9999",
        },
        "torch_env",
        "kubeflow",
        "worker",
        1,
        2,
        3,
        False,
        "xgb-master-0:9999",
    ),
    Example(
        "Kubernetes variables alone are not Kubeflow",
        {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"},
        "single",
        None,
        "chief",
        0,
        0,
        1,
        True,
        None,
    ),
    Example(
        "TF_CONFIG that says nothing",
        {"TF_CONFIG": "{}"},
        "single",
        None,
        "chief",
        0,
        0,
        1,
        True,
        None,
    ),
]
