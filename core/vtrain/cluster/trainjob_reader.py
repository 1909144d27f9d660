"""Kubeflow Trainer v2 (a TrainJob on a JobSet): the cluster from what the runtime sets on a node.

A TrainJob's nodes are identical pods of one Indexed Job, the JobSet's replicated
job "node"; each learns its index from JOB_COMPLETION_INDEX and its peers from the
JobSet's DNS names, `<jobset>-node-0-<index>.<jobset>`. Three runtimes, three
descriptions, read in this order:

1. vtrain's layout (`vtrain render kubeflow --runtime`, for TensorFlow and MXNet,
   whose roles a TrainJob cannot say): VTRAIN_TRAINJOB_LAYOUT, a JSON object of
   role counts in node order (chief, worker, ps, evaluator) and the port every node
   listens on. The JobSet's name comes from VTRAIN_JOBSET (vtrain's runtime sets it
   from the pod's `jobset.sigs.k8s.io/jobset-name` label), else from the pod's
   HOSTNAME. A rehearsal, whose nodes have no DNS, lists each node's address in
   the layout's "addresses" instead.
2. The XGBoost runtime (KEP-2598): DMLC_TRACKER_URI and DMLC_TRACKER_PORT (node 0,
   where rank 0 hosts the tracker), DMLC_TASK_ID, DMLC_NUM_WORKER.
3. The torch-distributed runtime: PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR,
   PET_MASTER_PORT, PET_NPROC_PER_NODE, for torchrun. A command that is torchrun is
   read by the torchrun reader instead, and the training operator's PyTorchJob,
   which also sets RANK, by the env:// reader; this one reads a node's own command.

Node 0 is the chief in each: what Vertex calls workerpool0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from vtrain.cluster import fields
from vtrain.cluster.build import checked
from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.cluster.torch_env_reader import master_address, out_of_range, rank_in_world
from vtrain.errors import ConfigError

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "trainjob"
LAYOUT = "VTRAIN_TRAINJOB_LAYOUT"
JOBSET = "VTRAIN_JOBSET"
INDEX = "JOB_COMPLETION_INDEX"
NODE_JOB = "node"
"""The JobSet's replicated job that runs the trainer nodes, in every Trainer runtime."""
LAYOUT_ROLES = (CHIEF, WORKER, PS, EVALUATOR)
"""The roles of a layout, in node order: node 0 is the chief, the workers follow …"""
TRACKER = ("DMLC_TRACKER_URI", "DMLC_TASK_ID")
PET = "PET_NODE_RANK"
_LAYOUT_EXPECTED = (
    '{"chief": 1, "worker": N, "ps": N, "evaluator": N, "port": P}, as vtrain render kubeflow '
    "--trainjob writes it"
)


def present(environ: Mapping[str, str]) -> bool:
    """True on a TrainJob node whose runtime described the cluster (read after the others)."""
    return bool(environ.get(LAYOUT) or all(environ.get(n) for n in TRACKER) or environ.get(PET))


def read(environ: Mapping[str, str]) -> dict[str, Any]:
    """The cluster from the first description set: vtrain's layout, DMLC_*, then PET_*."""
    if environ.get(LAYOUT):
        return _from_layout(environ)
    if all(environ.get(n) for n in TRACKER):
        return _from_tracker(environ)
    return _from_torch(environ)


def layout_counts(text: str) -> tuple[dict[str, int], int, tuple[str | None, ...] | None]:
    """VTRAIN_TRAINJOB_LAYOUT's role counts (in node order), port, and addresses if listed."""
    doc = fields.parse_json(LAYOUT, text)
    if not isinstance(doc, Mapping):
        raise ConfigError("not a JSON object", source=LAYOUT, value=doc, expected=_LAYOUT_EXPECTED)
    unknown = sorted(set(doc) - {*LAYOUT_ROLES, "port", "addresses"})
    if unknown:
        raise ConfigError("unknown key", source=LAYOUT, value=unknown[0], expected=_LAYOUT_EXPECTED)
    counts = {r: fields.index(LAYOUT, r, doc.get(r, 0)) for r in LAYOUT_ROLES}
    if counts[CHIEF] != 1:
        raise ConfigError(
            "a TrainJob's node 0 is its one chief",
            source=LAYOUT,
            path=CHIEF,
            value=doc.get(CHIEF),
            expected="1",
        )
    total = sum(counts.values())
    if total > fields.MAX_REPLICAS:
        raise ConfigError("implausibly large", source=LAYOUT, value=total)
    port = fields.index(LAYOUT, "port", doc.get("port"))
    if not 1 <= port <= fields.MAX_PORT:
        raise ConfigError("bad port", source=LAYOUT, path="port", value=port, expected="1 to 65535")
    listed = doc.get("addresses")
    addresses = None
    if listed is not None:
        addresses = fields.addresses(LAYOUT, "addresses", listed)
        if len(addresses) != total or None in addresses:
            raise ConfigError(
                f"{len(addresses)} addresses for {total} nodes",
                source=LAYOUT,
                path="addresses",
                expected="one host:port per node, in node order",
            )
    return counts, port, addresses


def node_host(jobset: str, index: int) -> str:
    """The DNS name JobSet gives node `index` of a TrainJob's trainer nodes."""
    return f"{jobset}-{NODE_JOB}-0-{index}.{jobset}"


def jobset_name(environ: Mapping[str, str], index: int) -> str:
    """The JobSet's name: VTRAIN_JOBSET, else the pod's HOSTNAME (`<jobset>-node-0-<index>`)."""
    name = environ.get(JOBSET, "").strip(fields.BLANKS)
    source, expected = JOBSET, "the JobSet's name (its label jobset.sigs.k8s.io/jobset-name)"
    if not name:
        host = environ.get("HOSTNAME", "").strip(fields.BLANKS)
        found = re.fullmatch(rf"(.+)-{NODE_JOB}-0-{index}", host)
        if found is None:
            raise ConfigError(
                f"names no node {index} of a TrainJob, and {JOBSET} is not set",
                source="HOSTNAME",
                value=host,
                expected=f"<jobset>-{NODE_JOB}-0-{index}, as JobSet names its pods",
                hint=f"run on vtrain's runtime (vtrain render kubeflow --runtime), which sets "
                f"{JOBSET}",
            )
        name, source, expected = found[1], "HOSTNAME", "a pod named <jobset>-node-0-<index>"
    if not fields.is_host(name) or name.startswith("["):
        raise ConfigError("not a JobSet name", source=source, value=name, expected=expected)
    return name


def _node_index(environ: Mapping[str, str], nodes: int, why: str) -> int:
    index = fields.env_required_int(environ, INDEX, why)
    if index >= nodes:
        raise out_of_range(INDEX, index, "nodes", nodes)
    return index


def _from_layout(environ: Mapping[str, str]) -> dict[str, Any]:
    counts, port, addresses = layout_counts(environ[LAYOUT])
    total = sum(counts.values())
    index = _node_index(environ, total, f"{LAYOUT} is set (JobSet sets it on every node)")
    if addresses is None:
        jobset = jobset_name(environ, index)
        addresses = tuple(f"{node_host(jobset, i)}:{port}" for i in range(total))
    cluster: dict[str, tuple[str | None, ...]] = {}
    first = 0
    role, role_index = CHIEF, 0
    for name in LAYOUT_ROLES:
        cluster[name] = addresses[first : first + counts[name]]
        if first <= index < first + counts[name]:
            role, role_index = name, index - first
        first += counts[name]
    return checked(
        LAYOUT,
        source=NAME,
        platform="kubeflow",
        cluster=cluster,
        role=role,
        index=role_index,
        role_names={},
    )


def _from_tracker(environ: Mapping[str, str]) -> dict[str, Any]:
    why = "DMLC_TRACKER_URI is set (the XGBoost runtime sets it on every node)"
    rank, world = rank_in_world(environ, "DMLC_TASK_ID", "DMLC_NUM_WORKER", why)
    tracker = master_address(environ, "DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", why)
    return _trainers(tracker, world, rank)


def _from_torch(environ: Mapping[str, str]) -> dict[str, Any]:
    why = f"{PET} is set (the torch-distributed runtime sets it on every node)"
    rank, nodes = rank_in_world(environ, PET, "PET_NNODES", why)
    master = master_address(environ, "PET_MASTER_ADDR", "PET_MASTER_PORT", why)
    text = environ.get("PET_NPROC_PER_NODE", "")
    # "auto", "cpu" and "gpu" are resolved by torchrun inside the node; unknown here.
    nproc = fields.env_int(environ, "PET_NPROC_PER_NODE", minimum=1) if text.isdigit() else None
    return _trainers(master, nodes, rank, local_world_size=nproc)


def _trainers(
    chief: str, world: int, rank: int, local_world_size: int | None = None
) -> dict[str, Any]:
    """Node 0 at `chief`, the other nodes workers whose addresses nobody gave."""
    return checked(
        NAME,
        source=NAME,
        platform="kubeflow",
        cluster={CHIEF: (chief,), WORKER: (None,) * (world - 1)},
        role=CHIEF if rank == 0 else WORKER,
        index=0 if rank == 0 else rank - 1,
        role_names={},
        local_world_size=local_world_size,
    )
