"""Kubeflow training-operator v1 manifests: TFJob, PyTorchJob, XGBoostJob (TrainJob: `trainjob`).

Built with the `kubeflow-training` models and written out by the client's own
serializer; `check` reads a manifest back into those models and refuses any
field the round trip would drop (a typo, or a field of another kind).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.context import OUTPUT_FOLDERS
from vtrain.errors import ConfigError, VtrainError, raise_all
from vtrain.submit import sdk
from vtrain.submit.topology import JobOptions, Pool

API_VERSION = "kubeflow.org/v1"
# --framework -> (kind, the spec's field for replica specs, container name, role -> type).
# The operator finds the training container by its name: it must be the framework's.
KINDS: dict[str, tuple[str, str, str, dict[str, str]]] = {
    "tensorflow": (
        "TFJob",
        "tfReplicaSpecs",
        "tensorflow",
        {CHIEF: "Chief", WORKER: "Worker", PS: "PS", EVALUATOR: "Evaluator"},
    ),
    "pytorch": (
        "PyTorchJob",
        "pytorchReplicaSpecs",
        "pytorch",
        {CHIEF: "Master", WORKER: "Worker"},
    ),
    "xgboost": ("XGBoostJob", "xgbReplicaSpecs", "xgboost", {CHIEF: "Master", WORKER: "Worker"}),
}
# MXNet jobs run as TFJobs: vtrain's MXNet plugin maps TF_CONFIG's chief/worker/ps roles.
KINDS["mxnet"] = KINDS["tensorflow"]
SPEC_FIELDS = {kind: field for kind, field, _, _ in KINDS.values()}
PLURALS = {"TFJob": "tfjobs", "PyTorchJob": "pytorchjobs", "XGBoostJob": "xgboostjobs"}
GPU = "nvidia.com/gpu"
MACHINE_LABEL = "node.kubernetes.io/instance-type"
ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


def render(options: JobOptions) -> tuple[str, dict[str, Any]]:
    """(kind, manifest) of the job's framework; a Trainer v2 TrainJob with `--trainjob`."""
    if options.runtime is not None:
        from vtrain.submit import trainjob

        return trainjob.render(options)
    models, _ = sdk.kubeflow_training()
    assert options.framework is not None
    kind, field, container, types = KINDS[options.framework]
    replica_specs = {
        types[pool.role]: models.KubeflowOrgV1ReplicaSpec(
            replicas=pool.count,
            # A failed replica restarts in place, as on Vertex (whose limit is 5 restarts).
            restart_policy="OnFailure",
            template=_pod(models, options, pool, container),
        )
        for pool in options.pools
        if pool.count
    }
    run_policy = models.KubeflowOrgV1RunPolicy(
        active_deadline_seconds=options.timeout, clean_pod_policy="None"
    )
    spec_class = getattr(models, f"KubeflowOrgV1{kind}Spec")
    spec_key = {
        "tfReplicaSpecs": "tf_replica_specs",
        "pytorchReplicaSpecs": "pytorch_replica_specs",
        "xgbReplicaSpecs": "xgb_replica_specs",
    }[field]
    job = getattr(models, f"KubeflowOrgV1{kind}")(
        api_version=API_VERSION,
        kind=kind,
        metadata=models.V1ObjectMeta(
            name=options.name, namespace=options.namespace, labels=dict(options.labels) or None
        ),
        spec=spec_class(**{spec_key: replica_specs, "run_policy": run_policy}),
    )
    manifest: dict[str, Any] = _api_client().sanitize_for_serialization(job)
    check(manifest, source="vtrain submit kubeflow")
    return kind, manifest


def _pod(models: Any, options: JobOptions, pool: Pool, container_name: str) -> Any:
    env = [models.V1EnvVar(name=k, value=v) for k, v in options.env]
    if options.output_dir:
        # Kubernetes gives a pod no output folders: name them as Vertex does, so that the
        # script's model, checkpoints and logs land in the same layout on every platform.
        base = options.output_dir
        env += [models.V1EnvVar(name=n, value=f"{base}/{d}/") for n, d in OUTPUT_FOLDERS.items()]
    resources = None
    selector: dict[str, str] = {}
    if pool.machine_type:
        selector[MACHINE_LABEL] = pool.machine_type
    if pool.accelerator is not None:
        resources = models.V1ResourceRequirements(limits={GPU: str(pool.accelerator.count)})
        selector[ACCELERATOR_LABEL] = pool.accelerator.type.lower().replace("_", "-")
    container = models.V1Container(
        name=container_name,
        image=pool.image,
        command=list(options.command) or None,
        args=list(options.args) or None,
        env=env or None,
        resources=resources,
    )
    return models.V1PodTemplateSpec(
        spec=models.V1PodSpec(
            containers=[container],
            node_selector=selector or None,
            service_account_name=options.service_account,
        )
    )


def _api_client() -> Any:
    import importlib

    return importlib.import_module("kubeflow.training.api_client").ApiClient()


class _Response:
    """What `ApiClient.deserialize` reads: an HTTP body."""

    def __init__(self, document: Any) -> None:
        self.data = json.dumps(document)


def parse(document: Mapping[str, Any], *, source: str) -> Any:
    """The kubeflow-training model of a TFJob, PyTorchJob or XGBoostJob manifest."""
    kind = document.get("kind")
    if kind not in PLURALS:
        raise ConfigError(
            "not a training-operator v1 job or a TrainJob",
            source=source,
            path="kind",
            value=kind,
            expected=" or ".join([*PLURALS, "TrainJob"]),
        )
    sdk.kubeflow_training()
    try:
        return _api_client().deserialize(_Response(document), f"KubeflowOrgV1{kind}")
    except (ValueError, TypeError) as e:
        raise ConfigError(f"not a valid {kind}: {e}", source=source) from None


def check(document: Mapping[str, Any], *, source: str) -> None:
    """Refuse a manifest the models cannot hold, or that no operator could run."""
    if document.get("kind") == "TrainJob":
        from vtrain.submit import trainjob

        trainjob.check(document, source=source)
        return
    job = parse(document, source=source)
    back = _api_client().sanitize_for_serialization(job)
    errors = round_trip_errors(
        document, back, source=source, models="kubeflow-training", api_version=API_VERSION
    )
    kind = str(document["kind"])
    field = SPEC_FIELDS[kind]
    specs = (document.get("spec") or {}).get(field) or {}
    allowed = next(t for k, f, _, t in KINDS.values() if k == kind and f == field).values()
    if not specs:
        errors.append(
            ConfigError(
                "no replicas",
                source=source,
                path=f"spec.{field}",
                expected="at least one replica spec",
            )
        )
    for name in specs:
        if name not in allowed:
            errors.append(
                ConfigError(
                    f"not a {kind} replica type",
                    source=source,
                    path=f"spec.{field}.{name}",
                    value=name,
                    expected=" or ".join(allowed),
                )
            )
    chief = "Chief" if kind == "TFJob" else "Master"
    for name in (chief, "Master"):
        count = (specs.get(name) or {}).get("replicas", 1)
        if name in specs and count != 1:
            errors.append(
                ConfigError(
                    "the chief pool runs exactly one replica",
                    source=source,
                    path=f"spec.{field}.{name}.replicas",
                    value=count,
                    expected="1",
                )
            )
    raise_all(errors)


def round_trip_errors(
    document: Mapping[str, Any], kept: Any, *, source: str, models: str, api_version: str
) -> list[VtrainError]:
    """What the models dropped from `document` (`kept` is their reading), and a wrong apiVersion."""
    errors: list[VtrainError] = [
        ConfigError(
            "unknown field",
            source=source,
            path=path,
            value=value,
            expected=f"a field of {document.get('kind')} ({models} models)",
        )
        for path, value in dropped(document, kept, "")
    ]
    if document.get("apiVersion") != api_version:
        errors.append(
            ConfigError(
                "wrong apiVersion",
                source=source,
                path="apiVersion",
                value=document.get("apiVersion"),
                expected=api_version,
            )
        )
    return errors


def dropped(given: Any, kept: Any, path: str) -> list[tuple[str, Any]]:
    """The fields of `given` that the models' round trip lost."""
    if isinstance(given, Mapping):
        kept = kept if isinstance(kept, Mapping) else {}
        lost = []
        for key, value in given.items():
            where = f"{path}.{key}" if path else str(key)
            if key not in kept and value is not None:
                lost.append((where, key))
            elif key in kept:
                lost.extend(dropped(value, kept[key], where))
        return lost
    if isinstance(given, list) and isinstance(kept, list):
        return [
            x
            for i, (g, k) in enumerate(zip(given, kept, strict=False))
            for x in dropped(g, k, f"{path}[{i}]")
        ]
    return []
