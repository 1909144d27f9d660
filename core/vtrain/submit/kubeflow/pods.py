"""What a Kubeflow pod of either generation gets beside its image: GPUs, nodes, output folders."""

from __future__ import annotations

from vtrain.context import OUTPUT_FOLDERS
from vtrain.submit.values import Accelerator

GPU = "nvidia.com/gpu"
MACHINE_LABEL = "node.kubernetes.io/instance-type"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


def node_selector(machine_type: str | None, accelerator: Accelerator | None) -> dict[str, str]:
    """The labels of the nodes the pod may run on: its machine type and accelerator."""
    selector: dict[str, str] = {}
    if machine_type:
        selector[MACHINE_LABEL] = machine_type
    if accelerator is not None:
        selector[ACCELERATOR_LABEL] = accelerator.type.lower().replace("_", "-")
    return selector


def output_env(output_dir: str | None) -> list[tuple[str, str]]:
    """Vertex's folder variables under --output-dir: the same layout on every platform."""
    # Kubernetes gives a pod no output folders: name them as Vertex does, so that the
    # script's model, checkpoints and logs land where they would there.
    if not output_dir:
        return []
    return [(name, f"{output_dir}/{folder}/") for name, folder in OUTPUT_FOLDERS.items()]
