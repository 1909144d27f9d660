"""Which Kubeflow Trainer runtime runs each framework, and the ClusterTrainingRuntimes of vtrain.

The Trainer ships torch-distributed (PyTorch, Lightning) and xgboost-distributed
(KEP-2598); it ships none for TensorFlow or MXNet, whose chief, workers, ps and
evaluator a TrainJob's identical nodes cannot say. For them vtrain renders a
runtime of its own (`vtrain render kubeflow --runtime NAME`, applied once by a
cluster admin): one replicated job "node" of numNodes pods, each listening on
PORT, given the JobSet's name (VTRAIN_JOBSET, from the pod's label), restarted
together by the JobSet up to MAX_RESTARTS times, as Vertex restarts a job. The
TrainJob carries the roles, node by node, in vtrain's layout
(`vtrain.cluster.trainjob_reader`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from vtrain.cluster.roles import CHIEF
from vtrain.cluster.trainjob_reader import JOBSET, LAYOUT_ROLES, NODE_JOB
from vtrain.errors import ConfigError, Problems, UsageError
from vtrain.submit import sdk
from vtrain.submit.kubeflow.round_trip import round_trip_problems

TORCH = "torch-distributed"
XGBOOST = "xgboost-distributed"
OWN_RUNTIMES: Mapping[str, str] = {"vtrain-tensorflow": "tensorflow", "vtrain-mxnet": "mxnet"}
"""vtrain's runtimes -> the framework each is labelled for."""
PORT = 2222
"""The port every node of vtrain's runtimes listens on (Vertex's)."""
MAX_RESTARTS = 5
"""The JobSet restarts all the nodes this many times (Vertex's limit for a job)."""
GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
"""Kubeflow Trainer's API group and version, the TrainJob's and the runtimes'."""
KIND = "ClusterTrainingRuntime"
# What the Trainer reads on a runtime: its framework, and the replicated job that trains.
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
STEP_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"


def framework_runtime(framework: str | None) -> str:
    """The runtime a framework's TrainJob runs on (its plugin's word); torch-distributed
    without one."""
    if framework is None:
        return TORCH
    from vtrain import plugins

    declared = plugins.get(framework).kubeflow
    return declared.runtime if declared is not None else TORCH


def resolved(trainjob: str, framework: str | None) -> str:
    """The runtime `--trainjob [RUNTIME]` names: RUNTIME, else the framework's."""
    return trainjob or framework_runtime(framework)


def needs_layout(runtime: str, framework: str | None) -> bool:
    """True when the TrainJob carries vtrain's layout: the roles of TensorFlow and MXNet, on
    vtrain's runtime or on one its cluster names otherwise."""
    return runtime in OWN_RUNTIMES or framework_runtime(framework) in OWN_RUNTIMES


def layout(counts: Mapping[str, int]) -> str:
    """VTRAIN_TRAINJOB_LAYOUT for the role counts (chief 1, workers, ps, evaluators)."""
    document: dict[str, int] = {r: counts.get(r, 0) for r in LAYOUT_ROLES if counts.get(r, 0)}
    document[CHIEF] = 1
    return json.dumps({**document, "port": PORT}, separators=(",", ":"))


def runtime_document(name: str) -> dict[str, Any]:
    """The ClusterTrainingRuntime `name` (one of OWN_RUNTIMES), checked by the Trainer's models."""
    framework = OWN_RUNTIMES.get(name)
    if framework is None:
        raise UsageError(
            "not a runtime vtrain brings",
            source="--runtime",
            value=name,
            expected=" or ".join(OWN_RUNTIMES),
            hint=f"the Trainer ships {TORCH} and {XGBOOST} itself",
        )
    env = [
        {
            "name": JOBSET,
            "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{JOBSET_NAME_LABEL}']"}},
        }
    ]
    container = {
        "name": NODE_JOB,
        # The TrainJob's trainer gives the image and the command.
        "image": "python:3.11-slim",
        "ports": [{"containerPort": PORT}],
        "env": env,
    }
    document = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": KIND,
        "metadata": {"name": name, "labels": {FRAMEWORK_LABEL: framework}},
        "spec": {
            "mlPolicy": {"numNodes": 1},
            "template": {
                "spec": {
                    "failurePolicy": {"maxRestarts": MAX_RESTARTS},
                    # Peers resolve each other's names before every node is ready.
                    "network": {"publishNotReadyAddresses": True},
                    "replicatedJobs": [
                        {
                            "name": NODE_JOB,
                            "replicas": 1,
                            "template": {
                                "metadata": {"labels": {STEP_LABEL: "trainer"}},
                                "spec": {
                                    # A failed node fails its Job: the JobSet restarts them all.
                                    "backoffLimit": 0,
                                    "template": {
                                        "spec": {
                                            "restartPolicy": "Never",
                                            "containers": [container],
                                        }
                                    },
                                },
                            },
                        }
                    ],
                }
            },
        },
    }
    model = sdk.kubeflow_trainer().TrainerV1alpha1ClusterTrainingRuntime.from_dict(document)
    problems = Problems(f"{KIND} {name}", kind=ConfigError)
    round_trip_problems(
        document,
        model.to_dict(),
        models="kubeflow_trainer_api",
        api_version=f"{GROUP}/{VERSION}",
        problems=problems,
    )
    problems.raise_all()
    return document
