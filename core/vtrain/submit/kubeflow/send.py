"""Creating a Kubeflow job: the kubernetes client's CustomObjectsApi, the user's kubeconfig.

A TrainJob that uses fields of Kubeflow Trainer v2.2.0 (runtimePatches,
activeDeadlineSeconds) is sent only to a cluster whose TrainJob CRD has them:
an API server drops a field its CRD does not know, and says nothing. Nor is it
sent to a cluster without the runtime it names: the Trainer would take the job
and leave it pending, with only an event to say why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vtrain.errors import ConfigError, UsageError, VtrainError
from vtrain.log import logger
from vtrain.redact import redact_text
from vtrain.submit import sdk
from vtrain.submit.delivery import Delivery
from vtrain.submit.document import JobDocument
from vtrain.submit.kubeflow import katib, runtimes, trainjob
from vtrain.submit.kubeflow.kinds import GROUP, KINDS, VERSION
from vtrain.submit.options import JobOptions
from vtrain.submit.values import DNS_1123_LABEL, MAX_LABEL

log = logger(__name__)
# What a TrainJob's runtimeRef.kind may name, and the plural each is read by.
RUNTIME_PLURALS = {
    trainjob.RUNTIME_KIND: "clustertrainingruntimes",
    "TrainingRuntime": "trainingruntimes",
}


def submit(job: JobDocument, options: JobOptions | None, delivery: Delivery) -> int:
    """Create the job in --namespace (else the manifest's, else default); print where it is."""
    namespace = delivery.namespace or job.document.get("metadata", {}).get("namespace") or "default"
    if not (len(namespace) <= MAX_LABEL and DNS_1123_LABEL.fullmatch(namespace)):
        # With --job the rules never saw it: the API server would answer with a bare 404.
        raise UsageError(
            "not a Kubernetes namespace",
            source="--namespace",
            value=namespace,
            expected="a DNS-1123 label: lowercase letters, digits and '-', at most 63",
        )
    where = send(job, namespace=namespace, kubeconfig=delivery.kubeconfig, context=delivery.context)
    delivery.terminal.say(where)
    return 0


def _resource(kind: str) -> tuple[str, str, str]:
    """(group, version, plural) of a v1 job kind, Trainer v2's TrainJob or Katib's Experiment."""
    if kind == trainjob.KIND:
        return trainjob.GROUP, trainjob.VERSION, trainjob.PLURAL
    if kind == katib.KIND:
        return katib.GROUP, katib.VERSION, katib.PLURAL
    return GROUP, VERSION, KINDS[kind].plural


def send(
    job: JobDocument, *, namespace: str, kubeconfig: str | None = None, context: str | None = None
) -> str:
    """Create the job in `namespace`; its ``namespace/kind/name``."""
    client = sdk.kubernetes_client()
    config = sdk.kubernetes_config()
    try:
        api_client = config.new_client_from_config(config_file=kubeconfig, context=context)
    except (config.ConfigException, OSError) as e:
        raise ConfigError(
            f"cannot use the kubeconfig: {e}",
            source="--kubeconfig",
            value=kubeconfig or "~/.kube/config",
            expected="a kubeconfig with a current context",
        ) from None
    group, version, plural = _resource(job.kind)
    document = dict(job.document)
    document["metadata"] = {**document.get("metadata", {}), "namespace": namespace}
    try:
        with api_client:
            if job.kind == trainjob.KIND:
                _check_trainer(client, api_client, job)
                _check_runtime(client, api_client, job, namespace)
            created = client.CustomObjectsApi(api_client).create_namespaced_custom_object(
                group=group,
                version=version,
                namespace=namespace,
                plural=plural,
                body=document,
            )
    except client.ApiException as e:
        raise VtrainError(
            f"the cluster refused the {job.kind}: {e.status} {e.reason}: "
            + redact_text(str(e.body))[:300],
            source="vtrain submit kubeflow",
        ) from None
    except (OSError, sdk.connection_error()) as e:
        raise VtrainError(
            f"cannot reach the cluster: {type(e).__name__}", source="vtrain submit kubeflow"
        ) from None
    name = created.get("metadata", {}).get("name", document["metadata"].get("name"))
    return f"{namespace}/{job.kind}/{name}"


def _check_trainer(client: Any, api_client: Any, job: JobDocument) -> None:
    """Refuse a TrainJob whose v2.2.0 fields the cluster's TrainJob CRD lacks; say when the
    cluster's Trainer keeps no TrainJob status."""
    fields = trainjob.fields_since_minimum(job.document)
    crd = _trainjob_crd(client, api_client, fields)
    if crd is None:
        return
    missing = trainjob.missing_from_crd(crd, fields)
    if missing:
        raise VtrainError(
            f"the cluster's TrainJob CRD has no spec.{', spec.'.join(missing)}: its Kubeflow "
            f"Trainer is older than {trainjob.MINIMUM_TRAINER}, and would drop "
            + ("them" if len(missing) > 1 else "it")
            + " without a word",
            source="vtrain submit kubeflow",
            hint=f"upgrade Kubeflow Trainer to {trainjob.MINIMUM_TRAINER} or later; or send the "
            "job without --machine-type, --accelerator, --spot and --service-account "
            "(runtimePatches) and --timeout (activeDeadlineSeconds)",
        )
    if not _has_trainer_status(crd):
        # The job runs all the same; only what vtrain's report posts has nowhere to show.
        log.info(
            "vtrain submit: note: the cluster's Kubeflow Trainer has no TrainJob status (its "
            f"{trainjob.CRD} CRD has no status.trainerStatus: feature gate TrainJobStatus, "
            f"Trainer {trainjob.MINIMUM_TRAINER} or later), so progress and metrics will not "
            "show in `kubectl get trainjob`; the job is sent"
        )


def _trainjob_crd(client: Any, api_client: Any, fields: list[str]) -> dict[str, Any] | None:
    """The cluster's TrainJob CRD; None (and said) where the user may not read it."""
    try:
        crd = client.ApiextensionsV1Api(api_client).read_custom_resource_definition(trainjob.CRD)
    except client.ApiException as e:
        if e.status == 404:
            raise VtrainError(
                f"the cluster has no {trainjob.CRD} CRD",
                source="vtrain submit kubeflow",
                hint=f"install Kubeflow Trainer {trainjob.MINIMUM_TRAINER} or later",
            ) from None
        # Reading CRDs is often an administrator's right: say what was not checked, and go on.
        unchecked = (
            f"{', '.join(fields)} need Kubeflow Trainer {trainjob.MINIMUM_TRAINER} or later, "
            "which is not checked"
            if fields
            else "whether its Trainer keeps TrainJob status is not checked"
        )
        log.info(
            f"vtrain submit: note: cannot read the {trainjob.CRD} CRD ({e.status} {e.reason}); "
            + unchecked
        )
        return None
    found: dict[str, Any] = api_client.sanitize_for_serialization(crd)
    return found


def _has_trainer_status(crd: Mapping[str, Any]) -> bool:
    """True when the TrainJob CRD's v1alpha1 schema has status.trainerStatus.

    A CRD of Trainer v2.2.0 or later has it whether or not the controller's TrainJobStatus
    gate is on: only its absence can be told from the CRD.
    """
    return "trainerStatus" in trainjob.crd_properties(crd, "status")


def _check_runtime(client: Any, api_client: Any, job: JobDocument, namespace: str) -> None:
    """Refuse a TrainJob whose runtime the cluster lacks; say so where it may not be read."""
    ref = job.document["spec"]["runtimeRef"]  # `trainjob.parse` refused a TrainJob without it
    name, kind = ref["name"], ref.get("kind") or trainjob.RUNTIME_KIND
    if kind not in RUNTIME_PLURALS or (ref.get("apiGroup") or trainjob.GROUP) != trainjob.GROUP:
        return  # not a runtime kind of the Trainer's: its webhook answers for it
    try:
        _read_runtime(client.CustomObjectsApi(api_client), kind, name, namespace)
    except client.ApiException as e:
        if e.status == 404:
            where = f" in namespace {namespace}" if kind != trainjob.RUNTIME_KIND else ""
            raise VtrainError(
                f"the cluster has no {kind} {name}{where}",
                source="vtrain submit kubeflow",
                hint=_runtime_hint(name, kind),
            ) from None
        # Reading runtimes may be refused, as reading CRDs is: say what was not checked, go on.
        log.info(
            f"vtrain submit: note: cannot read the {kind} {name} ({e.status} {e.reason}); "
            "that the cluster has it is not checked"
        )


def _read_runtime(api: Any, kind: str, name: str, namespace: str) -> None:
    """Read the runtime: cluster-wide, or a TrainingRuntime in the job's own namespace."""
    where = {"group": trainjob.GROUP, "version": trainjob.VERSION, "plural": RUNTIME_PLURALS[kind]}
    if kind == trainjob.RUNTIME_KIND:
        api.get_cluster_custom_object(name=name, **where)
    else:
        api.get_namespaced_custom_object(namespace=namespace, name=name, **where)


def _runtime_hint(name: str, kind: str) -> str:
    """Who provides the runtime `name`, and how."""
    if kind == trainjob.RUNTIME_KIND and name in runtimes.OWN_RUNTIMES:
        return (
            f"a cluster admin applies it: vtrain render kubeflow --runtime {name} "
            "| kubectl apply -f -"
        )
    if kind == trainjob.RUNTIME_KIND and name in (runtimes.TORCH, runtimes.XGBOOST):
        return (
            "the Trainer ships it: install the runtimes of Kubeflow Trainer "
            f"{trainjob.MINIMUM_TRAINER} or later"
        )
    return (
        f"apply a {kind} {name}, or name one the cluster has (kubectl get {RUNTIME_PLURALS[kind]})"
    )
