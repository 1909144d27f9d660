"""What a Kubeflow pod of either generation gets beside its image: accelerators, nodes, folders.

The node selector and resource limits come from GKE's table of accelerators
(`gke`); `--spot` adds GKE's spot label and the toleration of its taint.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vtrain.context import OUTPUT_FOLDERS
from vtrain.submit.kubeflow.gke import SPOT_LABEL, NodeAccelerator, node_accelerator
from vtrain.submit.values import Accelerator

MACHINE_LABEL = "node.kubernetes.io/instance-type"
# GKE taints spot nodes only where the pool asks for it; the toleration lets the pod on either.
SPOT_TOLERATION = {"key": SPOT_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}


@dataclass(frozen=True)
class Placement:
    """Where a pod runs and what it holds there: node labels, resource limits, tolerations."""

    node_selector: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict[str, str]] = field(default_factory=list)


def placement(machine_type: str | None, accelerator: Accelerator | None, spot: bool) -> Placement:
    """The node selector, limits and tolerations of a pod on `machine_type` with `accelerator`."""
    selector: dict[str, str] = {}
    limits: dict[str, str] = {}
    if machine_type:
        selector[MACHINE_LABEL] = machine_type
    if accelerator is not None:
        node: NodeAccelerator = node_accelerator(accelerator)
        selector.update(node.labels)
        limits[node.resource] = str(node.count)
    tolerations = []
    if spot:
        selector[SPOT_LABEL] = "true"
        tolerations.append(dict(SPOT_TOLERATION))
    return Placement(selector, limits, tolerations)


def output_env(output_dir: str | None, trial: str | None = None) -> list[tuple[str, str]]:
    """Vertex's folder variables under --output-dir (and a trial's folder): the same layout."""
    # Kubernetes gives a pod no output folders: name them as Vertex does, so that the
    # script's model, checkpoints and logs land where they would there.
    if not output_dir:
        return []
    base = f"{output_dir}/{trial}" if trial else output_dir
    return [(name, f"{base}/{folder}/") for name, folder in OUTPUT_FOLDERS.items()]
