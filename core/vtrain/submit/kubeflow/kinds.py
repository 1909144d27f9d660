"""What the Kubeflow training operator (v1) expects of each job kind it runs, keyed by kind.

This is knowledge of the operator, not of a framework: a plugin declares which
kind runs it (`Plugin.kubeflow`), and everything else follows from the kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER

API_VERSION = "kubeflow.org/v1"
GROUP, VERSION = "kubeflow.org", "v1"


@dataclass(frozen=True)
class Kind:
    """One job kind of the training operator."""

    name: str
    """TFJob, PyTorchJob, XGBoostJob."""
    replica_specs: str
    """The spec's field that holds the replica specs, e.g. tfReplicaSpecs."""
    model_field: str
    """The same field in the kubeflow-training models, e.g. tf_replica_specs."""
    plural: str
    """The resource's plural, in the API's path: tfjobs."""
    container: str
    """The name the operator finds the training container by."""
    replica_types: Mapping[str, str]
    """vtrain role -> the operator's replica type; a role that is absent, the kind has not."""
    has: str
    """The roles the kind admits, in words, for errors."""

    @property
    def chief(self) -> str:
        """The replica type of the chief: Chief or Master."""
        return self.replica_types[CHIEF]

    def role_of(self, replica_type: str) -> str:
        """The vtrain role of one of this kind's replica types."""
        return next(role for role, name in self.replica_types.items() if name == replica_type)


KINDS: Mapping[str, Kind] = MappingProxyType(
    {
        kind.name: kind
        for kind in (
            # TF_CONFIG carries every role, so a framework whose plugin reads chief, worker
            # and ps from it (TensorFlow, MXNet) runs as a TFJob.
            Kind(
                "TFJob",
                "tfReplicaSpecs",
                "tf_replica_specs",
                "tfjobs",
                "tensorflow",
                {CHIEF: "Chief", WORKER: "Worker", PS: "PS", EVALUATOR: "Evaluator"},
                "a chief, workers, parameter servers and evaluators",
            ),
            Kind(
                "PyTorchJob",
                "pytorchReplicaSpecs",
                "pytorch_replica_specs",
                "pytorchjobs",
                "pytorch",
                {CHIEF: "Master", WORKER: "Worker"},
                "a master and workers",
            ),
            Kind(
                "XGBoostJob",
                "xgbReplicaSpecs",
                "xgb_replica_specs",
                "xgboostjobs",
                "xgboost",
                {CHIEF: "Master", WORKER: "Worker"},
                "a master and workers",
            ),
        )  # fmt: skip
    }
)
