"""Reading the cluster description every platform writes, into one `ClusterInfo`."""

from vtrain.cluster.info import ClusterInfo
from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, REDUCTION_SERVER, ROLES, WORKER

__all__ = ["CHIEF", "EVALUATOR", "PS", "REDUCTION_SERVER", "ROLES", "WORKER", "ClusterInfo"]
