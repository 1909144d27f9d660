"""Creating a Kubeflow job: the kubernetes client's CustomObjectsApi, the user's kubeconfig."""

from __future__ import annotations

from vtrain.errors import ConfigError, VtrainError
from vtrain.redact import redact_text
from vtrain.submit import sdk
from vtrain.submit.delivery import Delivery
from vtrain.submit.document import JobDocument
from vtrain.submit.kubeflow import trainjob
from vtrain.submit.kubeflow.kinds import GROUP, KINDS, VERSION
from vtrain.submit.options import JobOptions


def submit(job: JobDocument, options: JobOptions | None, delivery: Delivery) -> int:
    """Create the job in --namespace (else the manifest's, else default); print where it is."""
    namespace = delivery.namespace or job.document.get("metadata", {}).get("namespace") or "default"
    print(send(job, namespace=namespace, kubeconfig=delivery.kubeconfig, context=delivery.context))
    return 0


def _resource(kind: str) -> tuple[str, str, str]:
    """(group, version, plural) of a v1 job kind or of Trainer v2's TrainJob."""
    if kind == trainjob.KIND:
        return trainjob.GROUP, trainjob.VERSION, trainjob.PLURAL
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
