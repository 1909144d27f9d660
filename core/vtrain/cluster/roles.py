"""The normalized role names, and each platform's own names for them."""

from __future__ import annotations

CHIEF = "chief"
WORKER = "worker"
PS = "ps"
EVALUATOR = "evaluator"
# Vertex's Reduction Server replicas sit in workerpool2 like parameter servers, but they
# only reduce gradients for NCCL all-reduce: they are neither trainers nor parameter servers.
REDUCTION_SERVER = "reduction_server"

# Order matters: it is the order of ranks (chief before workers) and of printed tables.
ROLES = (CHIEF, WORKER, PS, EVALUATOR, REDUCTION_SERVER)

# Vertex AI names pools by position; the position fixes the role.
VERTEX_POOLS = {
    "workerpool0": CHIEF,
    "workerpool1": WORKER,
    "workerpool2": PS,
    "workerpool3": EVALUATOR,
}

# AI Platform, TF_CONFIG and Kubeflow TFJob use names; "master" is the legacy chief.
NAMED_ROLES = {"chief": CHIEF, "master": CHIEF, "worker": WORKER, "ps": PS, "evaluator": EVALUATOR}
