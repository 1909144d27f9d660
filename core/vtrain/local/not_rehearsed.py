"""What no rehearsal on one machine reproduces, read from the job's document: the lines the
verdict ends with (``not rehearsed: ...``).

A document names its machines its own way: Vertex a `machineSpec` per pool, AI
Platform a type and an `acceleratorConfig` per role (or a scale tier), Kubeflow
a pod's node selector and resource limits. Each is read here by a small pure
function; nothing of the submit package is loaded for it.
"""

from __future__ import annotations

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Machines = tuple[list[str], list[str]]
"""(accelerators, machines), each ``WHAT (WHERE)``: ``NVIDIA_TESLA_T4:1 (workerpool0)``."""

_AIP_ROLES = {
    "master": None,
    "worker": "workerCount",
    "parameterServer": "parameterServerCount",
    "evaluator": "evaluatorCount",
}
_AIP_TIERS = {
    "BASIC_GPU": "a GPU (scale tier BASIC_GPU)",
    "BASIC_TPU": "a TPU (scale tier BASIC_TPU)",
}
_GPU_LABEL = "cloud.google.com/gke-accelerator"
_TPU_LABEL = "cloud.google.com/gke-tpu-accelerator"
_MACHINE_LABEL = "node.kubernetes.io/instance-type"
_DEVICES = ("nvidia.com/gpu", "google.com/tpu")
NETWORK = (
    "the network's speed: the replicas talked over this machine's loopback, not the "
    "platform's network between machines"
)
NCCL = (
    "GPU collectives (NCCL): the replicas ran without the GPUs the document asks for, so "
    "no NCCL all-reduce crossed machines"
)


def not_rehearsed(platform: str, job: Any, replicas: int) -> list[str]:
    """The ``not rehearsed`` lines of a job of `replicas` on `platform` with document `job`
    (None: no document, so no machines are named)."""
    accelerators, machines = machines_of(platform, job)
    lines = []
    if accelerators:
        lines.append(
            f"accelerators: {', '.join(accelerators)}; the replicas ran on this machine "
            "without them"
        )
    if machines:
        lines.append(
            f"machine types and memory: {', '.join(machines)}; the replicas shared this "
            "machine's CPUs and memory"
        )
    lines.extend(_vertex_services(job) if platform == "vertex" else [])
    if replicas > 1:
        lines.append(NETWORK)
        # Only where GPUs are asked for: a CPU job uses the same CPU collectives (gloo, the
        # parameter servers, Rabit) there as here, and those the rehearsal does run.
        if any(not _is_tpu(a) for a in accelerators):
            lines.append(NCCL)
    return lines


def _vertex_services(spec: Any) -> list[str]:
    """What a CustomJob sends to Vertex's own services, which the rehearsal does not reach."""
    if not isinstance(spec, dict):
        return []
    named = [
        f"{what} {spec[field]}"
        for field, what in (("experimentRun", "Experiments run"), ("tensorboard", "TensorBoard"))
        if isinstance(spec.get(field), str)
    ]
    if not named:
        return []
    return [
        f"Vertex AI {', '.join(named)}: the rehearsal gave no AIP_EXPERIMENT_* and streamed "
        "no TensorBoard logs; the run's records were written to the job's folder alone"
    ]


def machines_of(platform: str, job: Any) -> Machines:
    """The accelerators and machines document `job` asks for, as its `platform` names them."""
    if not isinstance(job, dict):
        return [], []
    readers = {"vertex": _vertex, "aiplatform": _aiplatform, "kubeflow": _kubeflow}
    read = readers.get(platform, _kubeflow if platform == "trainjob" else None)
    return read(job) if read else ([], [])


def _vertex(spec: dict[str, Any]) -> Machines:
    accelerators, machines = [], []
    for i, pool in enumerate(spec.get("workerPoolSpecs") or []):
        machine = (pool or {}).get("machineSpec") or {}
        where = f"workerpool{i}"
        kind = machine.get("acceleratorType")
        if kind and kind != "ACCELERATOR_TYPE_UNSPECIFIED":
            accelerators.append(f"{kind}:{machine.get('acceleratorCount', 1)} ({where})")
        if machine.get("machineType"):
            machines.append(f"{machine['machineType']} ({where})")
    return accelerators, machines


def _aiplatform(training: dict[str, Any]) -> Machines:
    tier = training.get("scaleTier") or "BASIC"
    if tier != "CUSTOM":
        found = _AIP_TIERS.get(tier)
        return ([found] if found else []), [f"scale tier {tier}"]
    accelerators, machines = [], []
    for role, count in _AIP_ROLES.items():
        if count is not None and not int(training.get(count) or 0):
            continue
        config = (training.get(f"{role}Config") or {}).get("acceleratorConfig") or {}
        kind = config.get("type")
        if kind and kind != "ACCELERATOR_TYPE_UNSPECIFIED":
            accelerators.append(f"{kind}:{config.get('count', 1)} ({role})")
        if training.get(f"{role}Type"):
            machines.append(f"{training[f'{role}Type']} ({role})")
    return accelerators, machines


def _kubeflow(document: dict[str, Any]) -> Machines:
    """Every pod's node selector and resources, wherever the kind keeps them."""
    accelerators: list[str] = []
    machines: list[str] = []
    stack: list[tuple[Any, str]] = [(document.get("spec") or {}, "spec")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(value))
            continue
        if not isinstance(value, dict):
            continue
        selector = value.get("nodeSelector") or {}
        if isinstance(selector, dict):
            _kubeflow_node(selector, path, accelerators, machines)
        resources = value.get("resources")
        if isinstance(resources, dict):
            _kubeflow_resources(resources, path, accelerators, machines)
        stack.extend((v, f"{path}.{k}") for k, v in value.items() if k != "nodeSelector")
    return sorted(accelerators), sorted(machines)


def _kubeflow_node(
    selector: dict[str, Any], path: str, accelerators: list[str], machines: list[str]
) -> None:
    for label in (_GPU_LABEL, _TPU_LABEL):
        if selector.get(label):
            accelerators.append(f"{selector[label]} ({path})")
    if selector.get(_MACHINE_LABEL):
        machines.append(f"{selector[_MACHINE_LABEL]} ({path})")


def _kubeflow_resources(
    resources: dict[str, Any], path: str, accelerators: list[str], machines: list[str]
) -> None:
    limits = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
    for device in _DEVICES:
        if limits.get(device):
            accelerators.append(f"{device}: {limits[device]} ({path})")
    asked = [f"{k} {limits[k]}" for k in ("cpu", "memory") if limits.get(k)]
    if asked:
        machines.append(f"{', '.join(asked)} ({path})")


def _is_tpu(accelerator: str) -> bool:
    return "TPU" in accelerator.upper()
