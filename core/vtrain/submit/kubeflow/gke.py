"""The accelerators of GKE nodes (`accelerators.json`): what a pod's node selector and limits say.

`--accelerator TYPE:COUNT` on Kubeflow takes GKE's own name (nvidia-tesla-t4,
tpu-v5-lite-podslice) or Vertex's name of the same device (NVIDIA_TESLA_T4),
so that one command line renders for both. A GPU is asked for by the
`cloud.google.com/gke-accelerator` label and `nvidia.com/gpu`; a TPU by
`cloud.google.com/gke-tpu-accelerator`, `cloud.google.com/gke-tpu-topology`
and `google.com/tpu`. Anything else is refused, naming the names GKE has.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from vtrain.errors import UsageError
from vtrain.submit.values import Accelerator

GPU_LABEL = "cloud.google.com/gke-accelerator"
GPU_RESOURCE = "nvidia.com/gpu"
TPU_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY = "cloud.google.com/gke-tpu-topology"
TPU_RESOURCE = "google.com/tpu"
SPOT_LABEL = "cloud.google.com/gke-spot"


@dataclass(frozen=True)
class Table:
    """`accelerators.json`, read."""

    gpus: Mapping[str, str]
    """GKE's GPU name -> Vertex's name."""
    tpus: Mapping[str, tuple[str | None, Mapping[int, str]]]
    """GKE's TPU name -> (Vertex's name or None, chips per node -> topology)."""
    checked: str

    def names(self) -> str:
        """Every name GKE knows, then Vertex's names of the same devices, in words."""
        vertex = [*self.gpus.values(), *(v for v, _ in self.tpus.values() if v)]
        return (
            f"one of {', '.join([*self.gpus, *self.tpus])} (GKE's names, checked "
            f"{self.checked}), or Vertex's names of the same: {', '.join(vertex)}"
        )


@cache
def table() -> Table:
    """The table in `accelerators.json`."""
    text = resources.files(__package__).joinpath("accelerators.json").read_text(encoding="utf-8")
    data = json.loads(text)
    gpus = {k: v for k, v in data["gpus"].items() if k != "about"}
    tpus = {
        name: (tpu["vertex"], {int(c): t for c, t in tpu["topologies"].items()})
        for name, tpu in data["tpus"].items()
        if name != "about"
    }
    return Table(gpus=gpus, tpus=tpus, checked=data["checked"])


@dataclass(frozen=True)
class NodeAccelerator:
    """What a pod asks of its node for an accelerator: labels to select, a resource to limit."""

    labels: Mapping[str, str]
    resource: str
    count: int


def node_accelerator(accelerator: Accelerator) -> NodeAccelerator:
    """The node labels and resource of `accelerator`; refused when GKE has no such device."""
    t = table()
    name = _gke_name(accelerator.type) or ""
    if name in t.gpus:
        return NodeAccelerator({GPU_LABEL: name}, GPU_RESOURCE, accelerator.count)
    if name in t.tpus:
        topologies = t.tpus[name][1]
        if accelerator.count not in topologies:
            raise UsageError(
                f"a {name} node holds " + " or ".join(map(str, topologies)) + " chips",
                source=accelerator.flag,
                value=f"{accelerator.type}:{accelerator.count}",
                expected=" or ".join(f"{accelerator.type}:{c}" for c in topologies),
                hint="each replica is one TPU host; its chips make the slice's topology",
            )
        labels = {TPU_LABEL: name, TPU_TOPOLOGY: topologies[accelerator.count]}
        return NodeAccelerator(labels, TPU_RESOURCE, accelerator.count)
    raise UsageError(
        "not an accelerator GKE nodes carry",
        source=accelerator.flag,
        value=accelerator.type,
        expected=t.names(),
    )


def _gke_name(text: str) -> str | None:
    """GKE's name of `text`, given as GKE's name or as Vertex's; None when neither."""
    t = table()
    if text in t.gpus or text in t.tpus:
        return text
    by_vertex = {v: k for k, v in t.gpus.items()} | {
        v: k for k, (v, _) in t.tpus.items() if v is not None
    }
    return by_vertex.get(text)


def selector_problems(selector: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(label, value, expected) for each accelerator label of `selector` no GKE node has."""
    t = table()
    found: list[tuple[str, str, str]] = []
    for label in (GPU_LABEL, TPU_LABEL, TPU_TOPOLOGY):
        if label in selector and not isinstance(selector[label], str):
            found.append((label, selector[label], "a label value (a string)"))
    if found:
        return found
    if GPU_LABEL in selector and selector[GPU_LABEL] not in t.gpus:
        found.append((GPU_LABEL, selector[GPU_LABEL], "one of " + ", ".join(t.gpus)))
    if TPU_LABEL in selector:
        tpu = t.tpus.get(selector[TPU_LABEL])
        if tpu is None:
            found.append((TPU_LABEL, selector[TPU_LABEL], "one of " + ", ".join(t.tpus)))
        elif TPU_TOPOLOGY in selector and selector[TPU_TOPOLOGY] not in tpu[1].values():
            found.append(
                (TPU_TOPOLOGY, selector[TPU_TOPOLOGY], "one of " + ", ".join(tpu[1].values()))
            )
    return found
