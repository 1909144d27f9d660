"""Creating a Kubeflow job: the kubernetes client's CustomObjectsApi, the user's kubeconfig.

A TrainJob that uses fields of Kubeflow Trainer v2.2.0 (runtimePatches,
activeDeadlineSeconds) is sent only to a cluster whose TrainJob CRD has them:
an API server drops a field its CRD does not know, and says nothing.
"""

from __future__ import annotations

from typing import Any

from vtrain.errors import ConfigError, UsageError, VtrainError
from vtrain.log import logger
from vtrain.redact import redact_text
from vtrain.submit import sdk
from vtrain.submit.delivery import Delivery
from vtrain.submit.document import JobDocument
from vtrain.submit.kubeflow import katib, trainjob
from vtrain.submit.kubeflow.kinds import GROUP, KINDS, VERSION
from vtrain.submit.options import JobOptions
from vtrain.submit.values import DNS_1123_LABEL, MAX_LABEL

log = logger(__name__)


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
    """Refuse a TrainJob whose v2.2.0 fields the cluster's TrainJob CRD lacks."""
    fields = trainjob.fields_since_minimum(job.document)
    if not fields:
        return
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
        log.info(
            f"vtrain submit: note: cannot read the {trainjob.CRD} CRD ({e.status} {e.reason}); "
            f"{', '.join(fields)} need Kubeflow Trainer {trainjob.MINIMUM_TRAINER} or later, "
            "which is not checked"
        )
        return
    missing = trainjob.missing_from_crd(api_client.sanitize_for_serialization(crd), fields)
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
