"""Kubeflow's own flags: a Trainer v2 TrainJob, the namespace, and the kubeconfig to send with."""

from __future__ import annotations

from vtrain.submit.engine import Flag

FLAGS = (
    Flag(
        "--trainjob",
        {
            "nargs": "?",
            "const": "",
            "metavar": "RUNTIME",
            "help": "Kubeflow Trainer v2: a TrainJob on this ClusterTrainingRuntime (default: "
            "the framework's: torch-distributed for pytorch, xgboost-distributed for xgboost, "
            "vtrain's vtrain-tensorflow and vtrain-mxnet, which --runtime prints), instead of "
            "the training operator's retiring v1 job; needs Trainer v2.2.0 or later, which "
            "submit checks in the cluster",
        },
        option="trainjob",
        builds=True,
    ),
    Flag(
        "--runtime",
        {
            "metavar": "NAME",
            "help": "print the ClusterTrainingRuntime NAME that vtrain brings (vtrain-tensorflow "
            "or vtrain-mxnet), which a cluster admin applies once: `vtrain render kubeflow "
            "--runtime vtrain-tensorflow | kubectl apply -f -`; nothing else is rendered",
        },
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
