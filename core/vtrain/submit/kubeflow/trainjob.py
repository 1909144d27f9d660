"""Kubeflow Trainer v2: a TrainJob on a ClusterTrainingRuntime, built with kubeflow_trainer_api.

A TrainJob has no roles: `numNodes` identical trainer nodes run one image,
command and env, and the runtime it names sets what each node learns
(`vtrain.cluster.trainjob_reader` reads it). PyTorch's nodes are the chief and
the workers, on torch-distributed (PET_*); XGBoost's on xgboost-distributed
(DMLC_*); TensorFlow's and MXNet's are every role's, on vtrain's runtime
(`runtimes`), and the trainer's env carries vtrain's layout, which says each
node's role by its index. `check` reads a manifest back through the models and
refuses any field the round trip drops, and a layout that does not fit numNodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vtrain.cluster.roles import CHIEF, WORKER
from vtrain.cluster.trainjob_reader import LAYOUT, LAYOUT_ROLES, NODE_JOB, layout_counts
from vtrain.errors import ConfigError, Problems, VtrainError
from vtrain.submit import sdk
from vtrain.submit.kubeflow import runtimes
from vtrain.submit.kubeflow.containers import command_problems
from vtrain.submit.kubeflow.pods import output_env, placement
from vtrain.submit.kubeflow.round_trip import round_trip_problems
from vtrain.submit.options import JobOptions

KIND = "TrainJob"
PLURAL = "trainjobs"
# The Trainer's API group and version, and the kind of the runtime a TrainJob names: `runtimes`'.
GROUP, VERSION, RUNTIME_KIND = runtimes.GROUP, runtimes.VERSION, runtimes.KIND
API_VERSION = f"{GROUP}/{VERSION}"
# The patch's owner, as the Trainer webhook asks every runtimePatches entry to name one.
MANAGER = "vtrain"
CRD = f"{PLURAL}.{GROUP}"
# The fields vtrain writes that older Trainers do not have: an API server prunes a field its
# CRD lacks without a word, so the job would run without them.
MINIMUM_TRAINER = "v2.2.0"
SINCE_MINIMUM = ("runtimePatches", "activeDeadlineSeconds")


def fields_since_minimum(document: Mapping[str, Any]) -> list[str]:
    """The fields of `document`'s spec that need Trainer v2.2.0 or later."""
    spec = document.get("spec") or {}
    return [name for name in SINCE_MINIMUM if spec.get(name) is not None]


def crd_properties(crd: Mapping[str, Any], part: str) -> Mapping[str, Any]:
    """The fields of `part` (spec, status) in the TrainJob CRD's v1alpha1 schema."""
    versions = (crd.get("spec") or {}).get("versions") or []
    version: Mapping[str, Any] = next((v for v in versions if v.get("name") == VERSION), {})
    schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
    found: Mapping[str, Any] = ((schema.get("properties") or {}).get(part) or {}).get(
        "properties"
    ) or {}
    return found


def missing_from_crd(crd: Mapping[str, Any], fields: list[str]) -> list[str]:
    """The `fields` that the TrainJob CRD's schema (its v1alpha1 version) does not have."""
    spec = crd_properties(crd, "spec")
    return [name for name in fields if name not in spec]


def render(options: JobOptions) -> tuple[str, dict[str, Any]]:
    """(kind, manifest): a TrainJob on the runtime `--trainjob` names, else the framework's:
    1 + workers nodes, or for TensorFlow and MXNet every role's, with vtrain's layout."""
    m = sdk.kubeflow_trainer()
    chief = options.pool(CHIEF)
    runtime = runtimes.resolved(options.runtime or "", options.framework)
    counts = {role: options.count(role) for role in LAYOUT_ROLES}
    laid = runtimes.needs_layout(runtime, options.framework)
    layout = [(LAYOUT, runtimes.layout(counts))] if laid else []
    env = [
        m.IoK8sApiCoreV1EnvVar(name=k, value=v)
        for k, v in (*options.env, *output_env(options.output_dir), *layout)
    ]
    place = placement(chief.machine_type, chief.accelerator, options.scheduling == "SPOT")
    resources = None
    if place.limits:
        resources = m.IoK8sApiCoreV1ResourceRequirements(
            limits={
                k: m.IoK8sApimachineryPkgApiResourceQuantity(v) for k, v in place.limits.items()
            }
        )
    trainer = m.TrainerV1alpha1Trainer(
        image=chief.image,
        command=list(options.command) or None,
        args=list(options.args) or None,
        env=env or None,
        numNodes=sum(counts.values()) if laid else counts[CHIEF] + counts[WORKER],
        resourcesPerNode=resources,
    )
    spec = m.TrainerV1alpha1TrainJobSpec(
        runtimeRef=m.TrainerV1alpha1RuntimeRef(name=runtime, kind=RUNTIME_KIND, apiGroup=GROUP),
        trainer=trainer,
        activeDeadlineSeconds=options.timeout,
        runtimePatches=_patches(m, options),
    )
    job = m.TrainerV1alpha1TrainJob(
        apiVersion=API_VERSION,
        kind=KIND,
        metadata=m.IoK8sApimachineryPkgApisMetaV1ObjectMeta(
            name=options.name, namespace=options.namespace, labels=dict(options.labels) or None
        ),
        spec=spec,
    )
    manifest: dict[str, Any] = job.to_dict()
    check(manifest, source="vtrain submit kubeflow --trainjob")
    return KIND, manifest


def _patches(m: Any, options: JobOptions) -> list[Any] | None:
    """The pod settings a trainer cannot say: machine, accelerator, spot, service account."""
    chief = options.pool(CHIEF)
    place = placement(chief.machine_type, chief.accelerator, options.scheduling == "SPOT")
    if not place.node_selector and not options.service_account:
        return None
    pod = m.TrainerV1alpha1PodSpecPatch(
        nodeSelector=place.node_selector or None,
        tolerations=[m.IoK8sApiCoreV1Toleration(**t) for t in place.tolerations] or None,
        serviceAccountName=options.service_account,
    )
    node = m.TrainerV1alpha1ReplicatedJobPatch(
        name=NODE_JOB,
        template=m.TrainerV1alpha1JobTemplatePatch(
            spec=m.TrainerV1alpha1JobSpecPatch(template=m.TrainerV1alpha1PodTemplatePatch(spec=pod))
        ),
    )
    return [
        m.TrainerV1alpha1RuntimePatch(
            manager=MANAGER,
            trainingRuntimeSpec=m.TrainerV1alpha1TrainingRuntimeSpecPatch(
                template=m.TrainerV1alpha1JobSetTemplatePatch(
                    spec=m.TrainerV1alpha1JobSetSpecPatch(replicatedJobs=[node])
                )
            ),
        )
    ]


def parse(document: Mapping[str, Any], *, source: str) -> Any:
    """The kubeflow_trainer_api model of a TrainJob manifest."""
    m = sdk.kubeflow_trainer()
    spec = document.get("spec")
    ref = spec.get("runtimeRef") if isinstance(spec, Mapping) else None
    runtime = ref.get("name") if isinstance(ref, Mapping) else None
    if not runtime:
        # Checked here: the model's own error for a missing required field is pages long.
        raise ConfigError(
            "missing",
            source=source,
            path="spec.runtimeRef.name",
            expected="the ClusterTrainingRuntime to run on, e.g. torch-distributed",
        )
    try:
        return m.TrainerV1alpha1TrainJob.from_dict(dict(document))
    except (ValueError, TypeError, AttributeError, OverflowError) as e:
        # pydantic's ValidationError: its second and third lines name the field and the problem.
        detail = " ".join(line.strip() for line in str(e).splitlines()[1:3])
        raise ConfigError(f"not a valid TrainJob: {detail}", source=source) from None


def check(document: Mapping[str, Any], *, source: str) -> None:
    """Refuse a TrainJob the models cannot hold, or that the Trainer controller would reject."""
    job = parse(document, source=source)
    problems = Problems(source, kind=ConfigError)
    round_trip_problems(
        document,
        job.to_dict(),
        models="kubeflow_trainer_api",
        api_version=API_VERSION,
        problems=problems,
    )
    trainer = (document.get("spec") or {}).get("trainer")
    if isinstance(trainer, Mapping):
        command_problems(trainer, "spec.trainer", problems)
    nodes = job.spec.trainer.num_nodes if job.spec.trainer else None
    if nodes is not None and nodes < 1:
        problems.bad(
            "spec.trainer.numNodes", "a TrainJob runs at least one node", nodes, "1 or more"
        )
    if isinstance(trainer, Mapping):
        _layout_problems(trainer, nodes, problems)
    problems.raise_all()


def _layout_problems(trainer: Mapping[str, Any], nodes: int | None, problems: Problems) -> None:
    """vtrain's layout, where the trainer carries one: valid, and one role per node."""
    env = trainer.get("env") or []
    text = next(
        (e.get("value") for e in env if isinstance(e, Mapping) and e.get("name") == LAYOUT), None
    )
    if text is None:
        return
    try:
        counts = layout_counts(str(text))[0]
    except VtrainError as e:
        problems.bad(f"spec.trainer.env {LAYOUT}", e.problem, text, e.expected)
        return
    if sum(counts.values()) != (nodes or 1):
        problems.bad(
            "spec.trainer.numNodes",
            f"vtrain's layout has {sum(counts.values())} nodes",
            nodes,
            f"{sum(counts.values())}, a node for each role of {LAYOUT}",
        )
