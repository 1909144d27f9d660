"""What the Kubeflow training operator (v1) expects of each job kind it runs, and what it sets
on the kind's pods, keyed by kind.

This is knowledge of the operator, not of a framework: a plugin declares which
kind runs it (`Plugin.kubeflow`), and everything else follows from the kind: its
container's name, its roles, and the variables `vtrain local run` rehearses it with
(`vtrain.local.writers.kubeflow` reads them from the plan a rehearsal makes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER

API_VERSION = "kubeflow.org/v1"
GROUP, VERSION = "kubeflow.org", "v1"
# What the operator sets, each group of variables by its first (`Kind.sets`).
TF_CONFIG, MASTER_ADDR, WORKER_ADDRS = "TF_CONFIG", "MASTER_ADDR", "WORKER_ADDRS"


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
    sets: tuple[str, ...] = ()
    """What the operator sets on the kind's pods, each group by its first variable: TF_CONFIG
    (every role, on a job of more than one pod), MASTER_ADDR (and MASTER_PORT, WORLD_SIZE,
    RANK, on every trainer), WORKER_ADDRS (and WORKER_PORT, on every pod of a job with
    workers). `vtrain local run --job` rehearses the kind with them (the plan's `job_sets`)."""

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
                sets=(TF_CONFIG,),
            ),
            Kind(
                "PyTorchJob",
                "pytorchReplicaSpecs",
                "pytorch_replica_specs",
                "pytorchjobs",
                "pytorch",
                {CHIEF: "Master", WORKER: "Worker"},
                "a master and workers",
                sets=(MASTER_ADDR,),
            ),
            Kind(
                "XGBoostJob",
                "xgbReplicaSpecs",
                "xgb_replica_specs",
                "xgboostjobs",
                "xgboost",
                {CHIEF: "Master", WORKER: "Worker"},
                "a master and workers",
                # The operator's XGBoost plugin lists every worker's host for the tracker, on
                # top of the PyTorchJob-style master variables.
                sets=(MASTER_ADDR, WORKER_ADDRS),
            ),
        )
    }
)
