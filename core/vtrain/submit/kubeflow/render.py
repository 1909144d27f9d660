"""Kubeflow manifests: the training-operator v1 job of the kind the plugin declares, or a TrainJob.

`--framework NAME` names a vtrain plugin; its `kubeflow` declaration gives the
job's kind and container name, and `kinds` what the operator expects of that
kind. The manifest is built with the `kubeflow-training` models and written
out by the client's own serializer; `--trainjob` renders a Trainer v2 TrainJob,
and `--study` a Katib Experiment whose trials run the v1 job.
"""

from __future__ import annotations

from typing import Any

from vtrain import plugins
from vtrain.submit import sdk
from vtrain.submit.kubeflow import experiment, katib, trainjob
from vtrain.submit.kubeflow.kinds import API_VERSION, KINDS
from vtrain.submit.kubeflow.manifest import check
from vtrain.submit.kubeflow.pods import output_env, placement
from vtrain.submit.options import JobOptions
from vtrain.submit.pools import Pool


def render(options: JobOptions) -> tuple[str, dict[str, Any]]:
    """(kind, manifest) of the framework's job; a TrainJob (--trainjob); an Experiment (--study)."""
    if options.runtime is not None:
        return trainjob.render(options)
    kind, manifest = v1_job(options)
    if options.study is not None:
        return experiment.render(options, manifest)
    return kind, manifest


def v1_job(options: JobOptions) -> tuple[str, dict[str, Any]]:
    """(kind, manifest): the training-operator job; under a study, one trial's template."""
    models, _ = sdk.kubeflow_training()
    assert options.framework is not None  # the rules ask for --framework or --trainjob
    declared = plugins.get(options.framework).kubeflow
    assert declared is not None  # the rules refuse a plugin that declares no Kubeflow job
    kind = KINDS[declared.kind]
    replica_specs = {
        kind.replica_types[pool.role]: models.KubeflowOrgV1ReplicaSpec(
            replicas=pool.count,
            # A failed replica restarts in place, as on Vertex (whose limit is 5 restarts).
            restart_policy="OnFailure",
            template=_pod(models, options, pool, kind.container),
        )
        for pool in options.pools
        if pool.count
    }
    run_policy = models.KubeflowOrgV1RunPolicy(
        active_deadline_seconds=options.timeout, clean_pod_policy="None"
    )
    spec_class = getattr(models, f"KubeflowOrgV1{kind.name}Spec")
    job = getattr(models, f"KubeflowOrgV1{kind.name}")(
        api_version=API_VERSION,
        kind=kind.name,
        metadata=models.V1ObjectMeta(
            name=options.name, namespace=options.namespace, labels=dict(options.labels) or None
        ),
        spec=spec_class(**{kind.model_field: replica_specs, "run_policy": run_policy}),
    )
    manifest: dict[str, Any] = sdk.kubeflow_api_client().sanitize_for_serialization(job)
    check(manifest, source="vtrain submit kubeflow")
    return kind.name, manifest


def _pod(models: Any, options: JobOptions, pool: Pool, container_name: str) -> Any:
    study = options.study
    trial_args = katib.trial_args(study) if study is not None else []
    trial_env = katib.trial_env(study) if study is not None else []
    # Under Katib each trial writes to its own folder, as a Vertex trial does.
    trial = f"${{trialParameters.{katib.trial_name_parameter(study)}}}" if study else None
    env = [
        models.V1EnvVar(name=k, value=v)
        for k, v in (*options.env, *output_env(options.output_dir, trial), *trial_env)
    ]
    place = placement(pool.machine_type, pool.accelerator, options.scheduling == "SPOT")
    resources = models.V1ResourceRequirements(limits=place.limits) if place.limits else None
    container = models.V1Container(
        name=container_name,
        image=pool.image,
        command=list(options.command) or None,
        args=[*options.args, *trial_args] or None,
        env=env or None,
        resources=resources,
    )
    return models.V1PodTemplateSpec(
        spec=models.V1PodSpec(
            containers=[container],
            node_selector=place.node_selector or None,
            tolerations=[models.V1Toleration(**t) for t in place.tolerations] or None,
            service_account_name=options.service_account,
        )
    )
