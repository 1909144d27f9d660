"""Kubeflow's own flags: a Trainer v2 TrainJob, the namespace, and the kubeconfig to send with."""

from __future__ import annotations

from vtrain.submit.engine import Flag

FLAGS = (
    Flag(
        "--trainjob",
        {
            "nargs": "?",
            "const": "torch-distributed",
            "metavar": "RUNTIME",
            "help": "Kubeflow Trainer v2: a TrainJob of 1 + --workers nodes on this "
            "ClusterTrainingRuntime (default torch-distributed), instead of a v1 job; needs "
            "Trainer v2.2.0 or later (spec.runtimePatches, activeDeadlineSeconds), which submit "
            "checks in the cluster's CRD",
        },
        option="trainjob",
        builds=True,
    ),
    Flag("--namespace", {"help": "default: default"}, option="namespace", delivery="namespace"),
    Flag(
        "--kubeconfig",
        {"metavar": "FILE", "help": "default: ~/.kube/config"},
        delivery="kubeconfig",
    ),
    Flag("--context", {"help": "kubeconfig context"}, delivery="context"),
)
